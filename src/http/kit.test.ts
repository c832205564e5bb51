import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { lend } from '../infra/lent-bytes.js';
import { RawJson } from '../infra/raw-json.js';
import { SLICE_BYTES } from '../infra/paced-body.js';
import { bytesPerTurn } from '../../test/kit/bytes-per-turn.js';
import { sendJson } from './kit.js';

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

  describe('a big answer', () => {
    // Uneven pieces, so slices cross them: the envelope, then records of odd sizes (hex: valid JSON text).
    const records = [randomBytes(3 * SLICE_BYTES + 12_345), randomBytes(777), randomBytes(SLICE_BYTES)].map((b) => Buffer.from(`"${b.toString('hex')}"`));
    const body = () => ({
      flows: new RawJson([Buffer.from('['), records[0]!, Buffer.from(','), records[1]!, Buffer.from(','), records[2]!, Buffer.from(']')]),
    });
    const expected = `{"flows":[${records.join(',')}]}`;

    /** Serves one big answer to `client`, with the bytes each event-loop turn handed the socket. */
    async function serveBig(client: (url: string) => Promise<void>) {
      let perTurn: number[] = [];
      let asked: Promise<void> | undefined;
      const done = new Promise<void>((resolve) => {
        const server = createServer((_req, res) => {
          res.once('close', () => (server.close(), resolve()));
          perTurn = bytesPerTurn(res);
          sendJson(res, 200, body());
        });
        server.listen(0, '127.0.0.1', () => (asked = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)));
      });
      await done;
      await asked;
      return perTurn;
    }

    it('goes out a slice per event-loop turn, byte for byte, so requests behind it are not kept waiting', async () => {
      let text = '';
      const perTurn = await serveBig(async (url) => {
        text = await (await fetch(url)).text();
      });
      expect(text).toBe(expected);
      // Headers ride with the first slice.
      expect(Math.max(...perTurn)).toBeLessThanOrEqual(SLICE_BYTES + 1024);
      expect(perTurn.filter((n) => n > 0).length).toBeGreaterThanOrEqual(Math.ceil(expected.length / SLICE_BYTES));
    });

    it('stops writing when the client hangs up midway, and gives its lent memory back', async () => {
      // As big as a 25,000-record page: more than loopback's buffers hold, so a hang-up midway shows.
      const memory = new Uint8Array(new SharedArrayBuffer(64 * SLICE_BYTES));
      memory.fill(0x30); // "000…": a JSON number
      let givenBack = 0;
      lend(memory, () => givenBack++);
      let sent = 0;
      await new Promise<void>((resolve) => {
        const server = createServer((_req, res) => {
          const socket = res.socket!;
          res.once('close', () => {
            sent = socket.bytesWritten;
            server.close();
            resolve();
          });
          sendJson(res, 200, { n: new RawJson([memory]) });
        });
        server.listen(0, '127.0.0.1', async () => {
          const aborted = new AbortController();
          const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: aborted.signal });
          await res.body!.getReader().read(); // the first bytes, then hang up
          aborted.abort();
        });
      });
      await expect.poll(() => givenBack, { timeout: 2_000 }).toBe(1);
      expect(sent).toBeLessThan(memory.byteLength);
    });
  });
});
