import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { inspect } from './index.js';
import { packetWith, runTool } from './testing/loopback.js';

/** What a client sends first to a loopback server that answers once and closes. */
async function firstBytesOf(tool: string, args: (port: number) => string[], answer?: string): Promise<Buffer> {
  const received: Buffer[] = [];
  const server = createServer((socket) => {
    socket.once('data', (chunk) => {
      received.push(chunk);
      if (answer === undefined) socket.destroy();
      else socket.end(answer);
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await runTool(tool, args((server.address() as AddressInfo).port));
    return Buffer.concat(received);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const fromClient = (bytes: Uint8Array, dstPort = 8080) => inspect(packetWith(bytes, { protocol: 6, srcPort: 40000, dstPort }), true);

describe('HTTP/1.x requests from curl', () => {
  it('reads method, target, Host and User-Agent', async () => {
    const request = await firstBytesOf(
      'curl',
      (port) => ['-s', '--max-time', '5', '-A', 'agent/1.0 (meter test)', '-H', 'Host: web.example.test', `http://127.0.0.1:${port}/path/x?q=1`],
      'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok',
    );
    expect(fromClient(request)).toEqual({
      hints: { app_name: 'HTTP', http: { method: 'GET', uri: '/path/x?q=1', host: 'web.example.test', user_agent: 'agent/1.0 (meter test)' } },
    });
  });

  it('reads a POST and keeps what precedes any cut', async () => {
    const request = await firstBytesOf(
      'curl',
      (port) => ['-s', '--max-time', '5', '-d', 'a=1', `http://127.0.0.1:${port}/form`],
      'HTTP/1.1 204 No Content\r\n\r\n',
    );
    expect(fromClient(request).hints?.http).toMatchObject({ method: 'POST', uri: '/form', host: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
    const text = request.toString('latin1');
    const cutInHeaders = fromClient(request.subarray(0, text.indexOf('User-Agent')));
    expect(cutInHeaders).toMatchObject({ hints: { http: { method: 'POST', uri: '/form' } }, problem: 'http.truncated' });
    expect(cutInHeaders.hints?.http?.user_agent).toBeUndefined();
    for (let end = 1; end <= request.length; end++) expect(() => fromClient(request.subarray(0, end))).not.toThrow();
  });

  it('ignores requests travelling from the responder', async () => {
    expect(inspect(packetWith(Buffer.from('GET / HTTP/1.1\r\n\r\n'), { protocol: 6, srcPort: 80, dstPort: 40000 }), false)).toEqual({});
  });
});

describe('SSH identification from the OpenSSH client', () => {
  it('names the app from the banner', async () => {
    const banner = await firstBytesOf('ssh', (port) => [
      '-o',
      'BatchMode=yes',
      '-o',
      'StrictHostKeyChecking=no',
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'ConnectTimeout=3',
      '-p',
      String(port),
      'meter@127.0.0.1',
      'true',
    ]);
    expect(banner.toString('latin1')).toMatch(/^SSH-2\.0-OpenSSH/);
    expect(fromClient(banner, 2222)).toEqual({ hints: { app_name: 'SSH' } });
  });
});
