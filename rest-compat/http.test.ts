import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { lend } from '../src/infra/lent-bytes.js';
import { RawJson } from '../src/infra/raw-json.js';
import { sendJson } from './http.js';

describe('sendJson', () => {
  it('writes raw values as they are and gives their lent memory back once the response is done', async () => {
    const memory = new Uint8Array(new SharedArrayBuffer(8));
    memory.set(Buffer.from('[1,2]'));
    let givenBack = 0;
    lend(memory, () => givenBack++);
    const closed = new Promise<void>((resolve) => {
      const server = createServer((_req, res) => {
        res.once('close', () => resolve());
        sendJson(res, 200, { flows: new RawJson([memory.subarray(0, 5)]) });
      });
      server.listen(0, '127.0.0.1', async () => {
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
        expect(await res.text()).toBe('{"flows":[1,2]}');
        server.close();
      });
    });
    await closed;
    expect(givenBack).toBe(1);
  });

  it('gives lent memory back when the client hung up before the answer was ready', async () => {
    const memory = new Uint8Array(new SharedArrayBuffer(8));
    memory.set(Buffer.from('[1,2]'));
    let givenBack = 0;
    lend(memory, () => givenBack++);
    const server = createServer((req, res) => {
      // As a search that finishes after its client has gone: the response is closed already.
      req.socket.once('close', () => setImmediate(() => sendJson(res, 200, { flows: new RawJson([memory.subarray(0, 5)]) })));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const aborted = new AbortController();
      const asked = fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: aborted.signal }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
      aborted.abort();
      await asked;
      await expect.poll(() => givenBack, { timeout: 2_000 }).toBe(1);
    } finally {
      server.close();
    }
  });
});
