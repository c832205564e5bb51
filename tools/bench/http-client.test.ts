import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson } from './http-client.js';

let server: Server | undefined;

afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

async function serve(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<{ url: string; sockets: () => number }> {
  let sockets = 0;
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks).toString(), res));
  });
  server.on('connection', () => sockets++);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets: () => sockets };
}

describe('the benchmarks HTTP client', () => {
  it('sends the body and headers, and reads a body of content-length bytes written in pieces', async () => {
    // Over the client's 1 MiB read buffer, and no two reads alike: a copy from a reused buffer shows.
    const big = Buffer.from(Array.from({ length: 3_000_000 }, (_, i) => 97 + (i % 26)));
    const { url } = await serve((req, body, res) => {
      res.writeHead(201, { 'content-length': Buffer.byteLength(body) + big.length + 20, 'x-seen': String(req.headers.authorization) });
      res.write(body);
      res.write(big);
      setTimeout(() => res.end('-'.repeat(20)), 300);
    });
    const started = performance.now();
    const answer = await postJson(`${url}/search/records/1.0?x=1`, '{"a":"é"}', { authorization: 'Bearer t' });
    const wholeMs = performance.now() - started;
    expect(answer.status).toBe(201);
    expect(answer.body.length).toBe(Buffer.byteLength('{"a":"é"}') + big.length + 20);
    expect(answer.body.subarray(0, 10).toString()).toBe('{"a":"é"}');
    expect(answer.body.subarray(10, 10 + big.length).equals(big)).toBe(true);
    // The first byte is the head's, not the end's, which came 300 ms later. Compared with the whole
    // exchange rather than a fixed bound, so that a loaded machine does not fail it.
    expect(answer.firstByteMs).toBeLessThan(wholeMs - 200);
  });

  it('reads a head that arrives in pieces', async () => {
    const raw = net.createServer((socket) =>
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-le');
        setTimeout(() => socket.write('ngth: 5\r\n\r'), 10);
        setTimeout(() => socket.write('\nhel'), 20);
        setTimeout(() => socket.write('lo'), 30);
      }),
    );
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await postJson(`http://127.0.0.1:${(raw.address() as AddressInfo).port}/`, '{}');
      expect([answer.status, answer.body.toString()]).toEqual([200, 'hello']);
    } finally {
      raw.close();
    }
  });

  it('keeps one connection for requests one after another, and opens more for requests at once', async () => {
    const { url, sockets } = await serve((_req, body, res) => setTimeout(() => res.end(body), 10));
    for (let i = 0; i < 5; i++) expect((await postJson(url, `{"i":${i}}`)).body.toString()).toBe(`{"i":${i}}`);
    expect(sockets()).toBe(1);
    const answers = await Promise.all([1, 2, 3].map((i) => postJson(url, `{"i":${i}}`)));
    expect(answers.map((a) => a.body.toString())).toEqual(['{"i":1}', '{"i":2}', '{"i":3}']);
    expect(sockets()).toBe(3);
  });

  it('reads the answers of a connection into the same memory, each whole', async () => {
    const { url } = await serve((_req, body, res) => res.end(body));
    const long = await postJson(url, `"${'x'.repeat(100_000)}"`);
    const memory = long.body.buffer;
    expect(long.body.length).toBe(100_002);
    const short = await postJson(url, '"short"');
    expect(short.body.toString()).toBe('"short"');
    expect(short.body.buffer).toBe(memory);
    const longer = await postJson(url, `"${'y'.repeat(200_000)}"`);
    expect(longer.body.toString()).toBe(`"${'y'.repeat(200_000)}"`);
  });

  it('opens a new connection when the server closed the idle one', async () => {
    const { url, sockets } = await serve((_req, _body, res) => res.end('ok'));
    server!.keepAliveTimeout = 50; // Node closes idle sockets on a timer of ~1 s
    await postJson(url, '{}');
    await new Promise((r) => setTimeout(r, 1500));
    expect((await postJson(url, '{}')).body.toString()).toBe('ok');
    expect(sockets()).toBe(2);
  });

  it('refuses an answer it cannot measure rather than misreading it', async () => {
    const { url } = await serve((_req, _body, res) => {
      res.write('chunked');
      res.end();
    });
    await expect(postJson(url, '{}')).rejects.toThrow(/cannot read/);
  });
});
