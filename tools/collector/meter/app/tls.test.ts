import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspect } from './index.js';
import { freePort, packetWith, type Recording, runTool, startTool, stopTool, tcpRelay } from './testing/loopback.js';
import { type ClientHello, isGrease, ja4, truncatedSha256 } from './tls.js';

let dir: string;
let server: ChildProcess;
let serverPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meter-tls-'));
  const made = await runTool('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=sni.example.test',
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'cert.pem'),
  ]);
  expect(made.code, made.stderr).toBe(0);
  serverPort = await freePort();
  server = await startTool(
    'openssl',
    ['s_server', '-accept', `127.0.0.1:${serverPort}`, '-cert', join(dir, 'cert.pem'), '-key', join(dir, 'key.pem'), '-www', '-alpn', 'http/1.1'],
    /ACCEPT/,
  );
});

afterAll(async () => {
  if (server) await stopTool(server);
  rmSync(dir, { recursive: true, force: true });
});

/** Runs curl through a recording relay to `openssl s_server`; returns both sides' first bytes. */
async function handshake(curlArgs: string[], host = '127.0.0.1'): Promise<{ clientHello: Buffer; serverHello: Buffer; port: number }> {
  const relay: Recording = await tcpRelay(serverPort);
  try {
    const resolve = host === '127.0.0.1' ? [] : ['--resolve', `${host}:${relay.port}:127.0.0.1`];
    await runTool('curl', ['-sk', '--max-time', '5', ...resolve, ...curlArgs, `https://${host}:${relay.port}/`]);
    return { clientHello: Buffer.concat(relay.fromClient), serverHello: Buffer.concat(relay.fromServer), port: relay.port };
  } finally {
    await relay.close();
  }
}

function fromClient(bytes: Uint8Array, port: number) {
  return inspect(packetWith(bytes, { protocol: 6, srcPort: 40000, dstPort: port }), true);
}
function fromServer(bytes: Uint8Array, port: number) {
  return inspect(packetWith(bytes, { protocol: 6, srcPort: port, dstPort: 40000 }), false);
}

/** The cipher suites, extension types and signature algorithms OpenSSL's own `-trace` printed for its ClientHello. */
function tracedClientHello(trace: string): Pick<ClientHello, 'ciphers' | 'extensions' | 'signatureAlgorithms'> {
  const start = trace.indexOf('ClientHello');
  const hello = trace.slice(start, start + trace.slice(start).search(/(Sent|Received) Record/));
  const ciphersText = hello.slice(hello.indexOf('cipher_suites'), hello.indexOf('compression_methods'));
  const sigalgsStart = hello.indexOf('extension_type=signature_algorithms');
  const sigalgsText = hello.slice(sigalgsStart, hello.indexOf('extension_type=', sigalgsStart + 1));
  return {
    ciphers: [...ciphersText.matchAll(/\{0x([0-9A-F]{2}), 0x([0-9A-F]{2})\}/g)].map((m) => parseInt(m[1] + m[2], 16)),
    extensions: [...hello.matchAll(/extension_type=[\w-]+\((\d+)\)/g)].map((m) => Number(m[1])),
    signatureAlgorithms: [...sigalgsText.matchAll(/\(0x([0-9a-f]{4})\)/g)].map((m) => parseInt(m[1], 16)),
  };
}

describe('JA4', () => {
  it('matches a published fingerprint (browserleaks.com, Chrome 143: its ja4_r lists and ja4), GREASE included', () => {
    const hex = (list: string) => list.split(',').map((h) => parseInt(h, 16));
    const hello: ClientHello = {
      version: 0x0303,
      ciphers: [0x4a4a, ...hex('1301,1302,1303,c02b,c02f,c02c,c030,cca9,cca8,c013,c014,009c,009d,002f,0035')],
      extensions: [0xdada, ...hex('002d,0033,0010,fe0d,0017,44cd,0000,000b,000a,002b,ff01,0023,0012,0005,000d,001b'), 0x1a1a],
      alpn: [Buffer.from('h2'), Buffer.from('http/1.1')],
      supportedVersions: [0x7a7a, 0x0304, 0x0303],
      signatureAlgorithms: hex('0403,0804,0401,0503,0805,0501,0806,0601'),
    };
    expect(ja4(hello)).toBe('t13d1516h2_8daaf6152771_d8a2da3f94cd');
  });

  it('follows the spec for a hello without extensions and for ALPN values that are not alphanumeric', () => {
    const bare = { version: 0x0302, ciphers: [0x002f, 0x0a0a], extensions: [], alpn: [], supportedVersions: [], signatureAlgorithms: [] };
    expect(ja4(bare)).toBe(`t11i010000_${truncatedSha256('002f')}_000000000000`);
    const binaryAlpn = { ...bare, extensions: [0x0010, 0x000a], alpn: [Uint8Array.from([0xab, 0x61, 0xcd])] };
    expect(ja4(binaryAlpn)).toBe(`t11i0102ad_${truncatedSha256('002f')}_${truncatedSha256('000a')}`);
  });

  it('hashes long lists (past its first buffer) as their text, sorted by hex and without GREASE', () => {
    const values = Array.from({ length: 500 }, (_, i) => (i * 40503 + 17) & 0xffff);
    const hello: ClientHello = {
      version: 0x0303,
      ciphers: values,
      extensions: values.slice(0, 300),
      alpn: [],
      supportedVersions: [],
      signatureAlgorithms: values.slice(0, 400),
    };
    const hex = (list: number[]) => list.filter((v) => !isGrease(v)).map((v) => v.toString(16).padStart(4, '0'));
    const extensions = hex(values.slice(0, 300).filter((e) => e !== 0x0000 && e !== 0x0010)).sort();
    expect(ja4(hello).split('_').slice(1)).toEqual([
      truncatedSha256(hex(values).sort().join(',')),
      truncatedSha256(`${extensions.join(',')}_${hex(values.slice(0, 400)).join(',')}`),
    ]);
  });

  it('keeps a long SNI whole, escaping the bytes that are not printable', () => {
    const name = [...Buffer.from('a'.repeat(100)), ...new Array(300).fill(1)];
    const serverName = [
      0x00,
      0x00,
      (name.length + 5) >> 8,
      (name.length + 5) & 255,
      (name.length + 3) >> 8,
      (name.length + 3) & 255,
      0,
      name.length >> 8,
      name.length & 255,
      ...name,
    ];
    const body = [0x03, 0x03, ...new Array(32).fill(7), 0, 0x00, 0x02, 0x13, 0x01, 0x01, 0x00, serverName.length >> 8, serverName.length & 255, ...serverName];
    const handshake = [0x01, 0, body.length >> 8, body.length & 255, ...body];
    const record = Uint8Array.from([0x16, 0x03, 0x01, handshake.length >> 8, handshake.length & 255, ...handshake]);
    expect(fromClient(record, 8443).hints?.tls?.sni).toBe(`${'a'.repeat(100)}${'\\001'.repeat(300)}`);
  });

  it('names no protocol for an empty ALPN value; JA4 reads that first value as empty', () => {
    const alpn = [0x00, 0x10, 0x00, 0x06, 0x00, 0x04, 0x00, 0x02, 0x68, 0x32]; // "" and "h2"
    const body = [0x03, 0x03, ...new Array(32).fill(7), 0, 0x00, 0x02, 0x13, 0x01, 0x01, 0x00, 0x00, alpn.length, ...alpn];
    const handshake = [0x01, 0, 0, body.length, ...body];
    const record = Uint8Array.from([0x16, 0x03, 0x01, 0, handshake.length, ...handshake]);
    expect(fromClient(record, 8443)).toEqual({
      hints: { app_name: 'HTTPS', tls: { version: 'TLS 1.2', alpn: ['h2'], ja4: `t12i010100_${truncatedSha256('1301')}_${truncatedSha256('')}` } },
    });
  });

  it('reads a ClientHello that has no extensions (allowed before TLS 1.3) as whole', () => {
    const body = [0x03, 0x01, ...new Array(32).fill(7), 0, 0x00, 0x02, 0x00, 0x2f, 0x01, 0x00];
    const handshake = [0x01, 0, 0, body.length, ...body];
    const record = Uint8Array.from([0x16, 0x03, 0x01, 0, handshake.length, ...handshake]);
    expect(fromClient(record, 8443)).toEqual({
      hints: { app_name: 'TLS', tls: { version: 'TLS 1.0', ja4: `t10i010000_${truncatedSha256('002f')}_000000000000` } },
    });
  });

  it('is computed from the same lists OpenSSL traces for its own ClientHello', async () => {
    const relay = await tcpRelay(serverPort);
    const run = await runTool('openssl', [
      's_client',
      '-connect',
      `127.0.0.1:${relay.port}`,
      '-trace',
      '-servername',
      'trace.example.test',
      '-alpn',
      'h2,http/1.1',
    ]).finally(() => relay.close());
    const traced = tracedClientHello(run.stdout);
    expect(traced.ciphers.length).toBeGreaterThan(10);
    expect(traced.extensions).toContain(13);
    const inspected = fromClient(Buffer.concat(relay.fromClient), relay.port).hints?.tls;
    const expected = ja4({ version: 0x0303, alpn: [Buffer.from('h2')], supportedVersions: [0x0304], ...traced });
    expect(inspected).toMatchObject({ sni: 'trace.example.test', alpn: ['h2', 'http/1.1'], version: 'TLS 1.3', ja4: expected });
  });
});

describe('TLS hellos from curl (OpenSSL) and openssl s_server', () => {
  it('reads SNI, ALPN, the offered version and JA4 from a TLS 1.3 ClientHello; the ServerHello negotiates 1.3', async () => {
    const { clientHello, serverHello, port } = await handshake(['--http1.1'], 'sni.example.test');
    const client = fromClient(clientHello, port);
    expect(client.problem).toBeUndefined();
    expect(client.hints?.app_name).toBe('HTTPS'); // offered ALPN http/1.1 on a port other than 443
    expect(client.hints?.tls).toMatchObject({ version: 'TLS 1.3', sni: 'sni.example.test', alpn: ['http/1.1'] });
    expect(client.hints?.tls?.ja4).toMatch(/^t13d\d{4}h1_[0-9a-f]{12}_[0-9a-f]{12}$/);
    const server = fromServer(serverHello, port);
    expect(server.problem).toBeUndefined();
    expect(server.hints).toEqual({ tls: { version: 'TLS 1.3' } }); // ALPN is encrypted in 1.3
  });

  it('takes the first ALPN value for JA4 and keeps every offered one', async () => {
    const { clientHello, port } = await handshake(['--http2'], 'sni.example.test');
    const tls = fromClient(clientHello, port).hints?.tls;
    expect(tls?.alpn).toEqual(['h2', 'http/1.1']);
    expect(tls?.ja4).toMatch(/^t13d\d{4}h2_/);
  });

  it('marks a hello without SNI with "i" (curl sends none to an IP address)', async () => {
    const { clientHello, port } = await handshake(['--http1.1']);
    const tls = fromClient(clientHello, port).hints?.tls;
    expect(tls?.sni).toBeUndefined();
    expect(tls?.ja4).toMatch(/^t13i/);
  });

  it('reads TLS 1.2 from both hellos and the ALPN choice from a 1.2 ServerHello', async () => {
    const { clientHello, serverHello, port } = await handshake(['--http1.1', '--tlsv1.2', '--tls-max', '1.2'], 'sni.example.test');
    const client = fromClient(clientHello, port).hints?.tls;
    expect(client?.version).toBe('TLS 1.2');
    expect(client?.ja4).toMatch(/^t12d\d{4}h1_/);
    expect(fromServer(serverHello, port).hints).toEqual({ app_name: 'HTTPS', tls: { version: 'TLS 1.2', alpn: ['http/1.1'] } });
  });

  it('keeps what precedes any cut of a real hello, fingerprints only whole ones, and never throws', async () => {
    const handshakeBytes = await handshake(['--http2'], 'sni.example.test');
    const firstRecord = (bytes: Buffer) => bytes.subarray(0, 5 + bytes.readUInt16BE(3)); // later records follow on the stream
    const [clientHello, serverHello, port] = [firstRecord(handshakeBytes.clientHello), firstRecord(handshakeBytes.serverHello), handshakeBytes.port];
    const whole = fromClient(clientHello, port).hints?.tls;
    expect(whole?.ja4).toBeDefined();
    for (let end = 1; end < clientHello.length; end++) {
      const cut = fromClient(clientHello.subarray(0, end), port);
      expect(cut.hints?.tls?.ja4).toBeUndefined();
      if (end > 5) expect(cut.problem).toBe('tls.truncated');
      if (cut.hints?.tls?.sni !== undefined) expect(cut.hints.tls.sni).toBe(whole?.sni);
      if (cut.hints?.tls?.version !== undefined) expect(cut.hints.tls.version).toBe(whole?.version);
    }
    const negotiated = fromServer(serverHello, port).hints?.tls?.version;
    for (let end = 1; end < serverHello.length; end++) {
      const cut = fromServer(serverHello.subarray(0, end), port);
      if (end > 5) expect(cut.problem).toBe('tls.truncated');
      if (cut.hints?.tls?.version !== undefined) expect(cut.hints.tls.version).toBe(negotiated);
    }
  });
});
