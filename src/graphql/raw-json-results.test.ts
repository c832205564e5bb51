import { type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GraphQLObjectType, GraphQLScalarType, GraphQLSchema } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { lend } from '../infra/lent-bytes.js';
import { RawJson } from '../infra/raw-json.js';
import { SLICE_BYTES } from '../infra/paced-body.js';
import { bytesPerTurn } from '../../test/kit/bytes-per-turn.js';
import { rawJsonResults } from './raw-json-results.js';

const Json = new GraphQLScalarType({ name: 'Json', serialize: (value) => value });

/** A yoga server whose `page` is a raw JSON array of `records` numbers in lent memory. */
function serve(records: number) {
  const text = Buffer.from(JSON.stringify(Array.from({ length: records }, (_, i) => i)));
  const memory = new Uint8Array(new SharedArrayBuffer(text.length + 16));
  memory.set(text);
  const events: string[] = [];
  lend(memory, () => events.push('given back'));
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { page: { type: Json, resolve: () => new RawJson([memory.subarray(0, text.length)]) } } }),
  });
  const yoga = createYoga<{ res: ServerResponse }>({ schema, plugins: [rawJsonResults()], logging: false });
  const perTurn: number[][] = [];
  const server = createServer((req, res) => {
    res.once('close', () => events.push('response closed'));
    perTurn.push(bytesPerTurn(res));
    void yoga(req, res, { res });
  });
  return { server, events, perTurn, text: text.toString() };
}

describe('rawJsonResults', () => {
  it('streams a raw page as the bytes it is, with its length, and gives the memory back once the response is closed', async () => {
    const { server, events, text } = serve(600_000); // ~4 MB: more than one socket write
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ page }' }) });
      const body = await res.text();
      expect(res.status).toBe(200);
      expect(body).toBe(`{"data":{"page":${text}}}`);
      expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(body));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(events).toEqual(['response closed', 'given back']);
    } finally {
      server.close();
    }
  });

  it('writes a big page a slice per event-loop turn, so requests behind it are not kept waiting', async () => {
    const { server, perTurn, text } = serve(1_500_000); // ~11 MB
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ page }' }) });
      expect(await res.text()).toBe(`{"data":{"page":${text}}}`);
      const turns = perTurn[0]!;
      expect(Math.max(...turns)).toBeLessThanOrEqual(SLICE_BYTES + 1024); // headers ride with a slice
      expect(turns.filter((n) => n > 0).length).toBeGreaterThanOrEqual(Math.ceil(text.length / SLICE_BYTES));
    } finally {
      server.close();
    }
  });

  it('gives the memory back when the client hangs up mid-page', async () => {
    const { server, events } = serve(3_000_000); // ~20 MB, more than the socket buffers hold
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
      const aborted = new AbortController();
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ page }' }),
        signal: aborted.signal,
      });
      const reader = res.body!.getReader();
      await reader.read();
      aborted.abort();
      await expect.poll(() => events, { timeout: 2_000 }).toEqual(['response closed', 'given back']);
    } finally {
      server.close();
    }
  });
});
