import { afterEach, describe, expect, it } from 'vitest';
import { TokenSource } from './auth.js';
import { type BatchFormat, IngestQueue, batchIdPrefix } from './ingest.js';
import { createLogger } from './logring.js';
import { NATIVE_CONTENT_TYPE, decodeNativeBatch, encodeNativeBatch } from './native-batch.js';
import { type FakeService, type IngestCall, eventually, startFakeService } from './testing/fake-service.js';

const services: FakeService[] = [];
const queues: IngestQueue[] = [];
afterEach(async () => {
  for (const q of queues.splice(0)) await q.close();
  for (const s of services.splice(0)) await s.close();
});

interface SetupOptions {
  maxQueuedFlows?: number;
  batchFlows?: number;
  concurrency?: number;
  gzip?: boolean;
  format?: BatchFormat;
  nodeId?: string;
}

async function setup(ingest?: (call: IngestCall) => any, options: SetupOptions = {}) {
  const service = await startFakeService({ ingest });
  services.push(service);
  const logger = createLogger({ write: null, level: 'debug' });
  const tokens = new TokenSource({ baseUrl: service.url, accessKey: 'cid.secret', logger });
  const queue = new IngestQueue({
    baseUrl: service.url,
    tokens,
    batchIdPrefix: 'machine-run',
    logger,
    backoff: { initialMs: 10, maxMs: 50 },
    batchFlows: options.batchFlows ?? 10,
    maxQueuedFlows: options.maxQueuedFlows,
    concurrency: options.concurrency ?? 2,
    gzip: options.gzip,
    format: options.format,
    nodeId: () => options.nodeId,
  });
  queues.push(queue);
  return { service, queue, logger, tokens };
}

const flows = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ doc_type: 'flow', '@timestamp': 1_700_000_000_000 + from + i, key: `f${from + i}` }));
const keys = (service: FakeService) =>
  [...service.stored.values()]
    .flat()
    .map((f: any) => f.key)
    .sort();

describe('IngestQueue', () => {
  it('retries 503s with the same batch ids until the service recovers: no loss, no duplicates', async () => {
    let down = true;
    const { service, queue } = await setup((call) =>
      down || call.n < 6 ? { status: 503, headers: { 'retry-after': '0' }, body: { error: 'unavailable' } } : undefined,
    );
    await queue.push(flows(0, 45)); // 5 batches of ≤ 10
    await eventually(() => service.ingestCalls.length >= 8, 5_000, 'retries');
    expect(service.stored.size).toBe(0);
    expect(queue.stats()).toMatchObject({ queued: 45, sent: 0 });
    down = false;
    expect(await queue.drain(5_000)).toBe(true);

    const attempted = new Set(service.ingestCalls.map((c) => c.batch_id));
    expect([...attempted].sort()).toEqual(['machine-run-1', 'machine-run-2', 'machine-run-3', 'machine-run-4', 'machine-run-5']);
    // Every retry of an id carried the same flows.
    for (const call of service.ingestCalls) expect(call.flows).toEqual(service.stored.get(call.batch_id));
    expect(keys(service)).toEqual(
      flows(0, 45)
        .map((f) => f.key)
        .sort(),
    );
    expect(queue.stats()).toMatchObject({ queued: 0, sent: 45, failed: 0, batches_sent: 5 });
    expect(queue.stats().retries).toBeGreaterThanOrEqual(8);
  });

  it('retries dropped connections, and takes a new token after a 401', async () => {
    let calls = 0;
    const { service, queue, tokens } = await setup(
      () => {
        calls++;
        if (calls === 1) return { status: 0, destroy: true };
        if (calls === 2) return { status: 401, body: { error: 'authentication_error' } };
        return undefined;
      },
      { concurrency: 1 },
    );
    await queue.push(flows(0, 10));
    expect(await queue.drain(5_000)).toBe(true);
    expect(service.ingestCalls.map((c) => c.batch_id)).toEqual(['machine-run-1', 'machine-run-1', 'machine-run-1']);
    expect(service.tokensIssued.length).toBe(2);
    expect(tokens.refreshes).toBe(2);
    expect(keys(service)).toHaveLength(10);
  });

  it('honours Retry-After', async () => {
    const seen: number[] = [];
    const { queue } = await setup(
      (call) => {
        seen.push(Date.now());
        return call.n === 0 ? { status: 503, headers: { 'retry-after': '1' } } : undefined;
      },
      { concurrency: 1 },
    );
    await queue.push(flows(0, 3));
    expect(await queue.drain(5_000)).toBe(true);
    expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(950);
  });

  it('blocks push() while the queue is full instead of dropping', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { service, queue } = await setup(
      async () => {
        await gate;
        return undefined;
      },
      { maxQueuedFlows: 20, concurrency: 1 },
    );
    await queue.push(flows(0, 10));
    await queue.push(flows(10, 10));
    let third = false;
    const pushing = queue.push(flows(20, 10)).then(() => (third = true));
    await new Promise((r) => setTimeout(r, 200));
    expect(third).toBe(false);
    expect(queue.stats().queued).toBe(20);
    release();
    await pushing;
    expect(await queue.drain(5_000)).toBe(true);
    expect(keys(service)).toHaveLength(30);
  });

  it('counts records the service rejected, and drops only a batch it refuses outright', async () => {
    const { queue } = await setup(
      (call) => {
        if (call.batch_id === 'machine-run-1')
          return {
            status: 200,
            body: {
              batch_id: call.batch_id,
              accepted: 8,
              rejected: [
                { index: 0, error: 'bad' },
                { index: 3, error: 'bad' },
              ],
            },
          };
        if (call.batch_id === 'machine-run-2') return { status: 400, body: { error: 'invalid_request', message: 'flows must be an array' } };
        return undefined;
      },
      { concurrency: 1 },
    );
    await queue.push(flows(0, 30));
    expect(await queue.drain(5_000)).toBe(true);
    expect(queue.stats()).toMatchObject({ sent: 18, rejected: 2, dropped: 10, failed: 12, queued: 0 });
  });

  it('splits a batch the service finds too large (413) into halves with new ids', async () => {
    const { service, queue } = await setup((call) => (call.flows.length > 5 ? { status: 413, body: { error: 'payload_too_large' } } : undefined), {
      concurrency: 1,
    });
    await queue.push(flows(0, 10));
    expect(await queue.drain(5_000)).toBe(true);
    expect([...service.stored.keys()].sort()).toEqual(['machine-run-1.1', 'machine-run-1.2']);
    expect(keys(service)).toHaveLength(10);
  });

  it('close() stops at once and reports what was not sent', async () => {
    const { queue } = await setup(() => ({ status: 503 }), { concurrency: 1 });
    await queue.push(flows(0, 25));
    expect(await queue.drain(100)).toBe(false);
    await queue.close();
    expect(queue.stats()).toMatchObject({ queued: 25, sent: 0 });
    await expect(queue.push(flows(25, 1))).rejects.toThrow(/closed/);
  });

  it('sends gzip bodies by default, plain JSON when asked', async () => {
    for (const gzip of [true, false]) {
      const encodings: Array<string | undefined> = [];
      const { service, queue } = await setup((call) => void encodings.push(call.encoding), { gzip });
      await queue.push(flows(0, 12));
      expect(await queue.drain(5_000)).toBe(true);
      expect(encodings).toEqual(gzip ? ['gzip', 'gzip'] : [undefined, undefined]);
      expect(keys(service)).toHaveLength(12);
    }
  });

  it('keeps the flows through a 403 (no node yet) and sends them once it clears', async () => {
    let forbidden = true;
    const { service, queue } = await setup(() => (forbidden ? { status: 403, body: { error: 'authorization_error', message: 'no node' } } : undefined), {
      concurrency: 1,
    });
    await queue.push(flows(0, 5));
    await eventually(() => service.ingestCalls.length >= 2, 5_000, 'retries');
    forbidden = false;
    expect(await queue.drain(5_000)).toBe(true);
    expect(keys(service)).toHaveLength(5);
  });
});

describe('IngestQueue with format native', () => {
  const native = { format: 'native', concurrency: 1 } as const;

  it('sends a batch as a Native block, its id and node id in headers, the same bytes on every retry', async () => {
    const { service, queue } = await setup((call) => (call.n < 2 ? { status: 503, headers: { 'retry-after': '0' } } : undefined), {
      ...native,
      nodeId: 'node_legacy',
    });
    await queue.push(flows(0, 15));
    expect(await queue.drain(5_000)).toBe(true);
    const calls = service.ingestCalls;
    expect(calls.map((c) => [c.batch_id, c.contentType, c.encoding, c.node_id])).toEqual([
      ['machine-run-1', NATIVE_CONTENT_TYPE, 'gzip', 'node_legacy'],
      ['machine-run-1', NATIVE_CONTENT_TYPE, 'gzip', 'node_legacy'],
      ['machine-run-1', NATIVE_CONTENT_TYPE, 'gzip', 'node_legacy'],
      ['machine-run-2', NATIVE_CONTENT_TYPE, 'gzip', 'node_legacy'],
    ]);
    expect(calls[1]!.raw.equals(calls[0]!.raw) && calls[2]!.raw.equals(calls[0]!.raw)).toBe(true);
    expect(service.stored.get('machine-run-1')).toEqual(flows(0, 10));
    expect(keys(service)).toEqual(
      flows(0, 15)
        .map((f) => f.key)
        .sort(),
    );
    expect(queue.stats()).toMatchObject({ sent: 15, queued: 0, failed: 0, retries: 2 });
  });

  it('sends plain Native bytes when gzip is off, and no X-Node-Id without a node id', async () => {
    const { service, queue } = await setup(undefined, { ...native, gzip: false });
    await queue.push(flows(0, 3));
    expect(await queue.drain(5_000)).toBe(true);
    const [call] = service.ingestCalls;
    expect([call!.contentType, call!.encoding, call!.node_id]).toEqual([NATIVE_CONTENT_TYPE, undefined, undefined]);
    expect(decodeNativeBatch(call!.raw)).toEqual(flows(0, 3));
  });

  it('sends a batch the format cannot express as JSON, and the next one as Native again', async () => {
    const { service, queue } = await setup(undefined, { ...native, nodeId: 'node_legacy' });
    await queue.push([...flows(0, 9), { ...flows(9, 1)[0], 'dotted.key': 1 }]);
    await queue.push(flows(10, 10));
    expect(await queue.drain(5_000)).toBe(true);
    expect(service.ingestCalls.map((c) => [c.batch_id, c.contentType, c.node_id])).toEqual([
      ['machine-run-1', 'application/json', 'node_legacy'],
      ['machine-run-2', NATIVE_CONTENT_TYPE, 'node_legacy'],
    ]);
    expect(keys(service)).toHaveLength(20);
  });

  it('halves a Native batch the service finds too large (413) into Native halves with new ids', async () => {
    const { service, queue } = await setup((call) => (call.flows.length > 5 ? { status: 413, body: { error: 'payload_too_large' } } : undefined), native);
    await queue.push(flows(0, 10));
    expect(await queue.drain(5_000)).toBe(true);
    expect(service.ingestCalls.map((c) => [c.batch_id, c.contentType])).toEqual([
      ['machine-run-1', NATIVE_CONTENT_TYPE],
      ['machine-run-1.1', NATIVE_CONTENT_TYPE],
      ['machine-run-1.2', NATIVE_CONTENT_TYPE],
    ]);
    expect(service.stored.get('machine-run-1.1')).toEqual(flows(0, 5));
    expect(service.stored.get('machine-run-1.2')).toEqual(flows(5, 5));
  });

  it.each([400, 415])('sends a Native batch the service refuses (%i) again as JSON under a new id, and drops a JSON one it refuses', async (status) => {
    const { service, queue } = await setup(
      (call) =>
        call.contentType === NATIVE_CONTENT_TYPE || call.batch_id === 'machine-run-2.json' ? { status, body: { error: 'invalid_request' } } : undefined,
      native,
    );
    await queue.push(flows(0, 10));
    await queue.push(flows(10, 4));
    expect(await queue.drain(5_000)).toBe(true);
    expect(service.ingestCalls.map((c) => [c.batch_id, c.contentType])).toEqual([
      ['machine-run-1', NATIVE_CONTENT_TYPE],
      ['machine-run-1.json', 'application/json'],
      ['machine-run-2', NATIVE_CONTENT_TYPE],
      ['machine-run-2.json', 'application/json'],
    ]);
    expect(service.stored.get('machine-run-1.json')).toEqual(flows(0, 10));
    expect(queue.stats()).toMatchObject({ sent: 10, dropped: 4, failed: 4, queued: 0 });
  });
});

describe('IngestQueue.pushNative', () => {
  it('sends a block as one Native batch, and halves it (read back) when the service finds it too large', async () => {
    const { service, queue } = await setup((call) => (call.flows.length > 4 ? { status: 413, body: { error: 'payload_too_large' } } : undefined), {
      format: 'native',
      concurrency: 1,
    });
    await queue.pushNative!(encodeNativeBatch(flows(0, 3))!, 3);
    await queue.pushNative!(encodeNativeBatch(flows(3, 8))!, 8);
    expect(await queue.drain(5_000)).toBe(true);
    expect(service.ingestCalls.map((c) => [c.batch_id, c.contentType, c.flows.length])).toEqual([
      ['machine-run-1', NATIVE_CONTENT_TYPE, 3],
      ['machine-run-2', NATIVE_CONTENT_TYPE, 8],
      ['machine-run-2.1', NATIVE_CONTENT_TYPE, 4],
      ['machine-run-2.2', NATIVE_CONTENT_TYPE, 4],
    ]);
    expect([service.stored.get('machine-run-1'), service.stored.get('machine-run-2.1'), service.stored.get('machine-run-2.2')]).toEqual([
      flows(0, 3),
      flows(3, 4),
      flows(7, 4),
    ]);
    expect(queue.stats()).toMatchObject({ sent: 11, queued: 0, failed: 0 });
  });

  it('is not offered by a queue that sends JSON', async () => {
    const { queue } = await setup();
    expect(queue.pushNative).toBeUndefined();
  });
});

describe('batchIdPrefix', () => {
  it('close() waits for an attempt on the wire, and counts a batch it stored as sent', async () => {
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const { service, queue } = await setup(
      async (call) => {
        service.stored.set(call.batch_id, call.flows);
        await answered; // stored, the answer still on its way
        return undefined;
      },
      { concurrency: 1 },
    );
    await queue.push(flows(0, 10));
    await eventually(() => service.ingestCalls.length === 1, 5_000, 'the batch on the wire');
    const closing = queue.close();
    setTimeout(answer, 100);
    await closing;
    expect(queue.stats()).toMatchObject({ sent: 10, queued: 0, unconfirmed: 0 });
  });

  it('close() reports a batch whose last attempt got no answer as unconfirmed, and does not retry it', async () => {
    const { service, queue } = await setup(() => ({ status: 0, destroy: true }), { concurrency: 1 });
    await queue.push(flows(0, 10));
    await queue.push(flows(10, 10));
    await eventually(() => service.ingestCalls.length >= 1, 5_000, 'an attempt');
    await queue.close();
    const attempts = service.ingestCalls.length;
    expect(queue.stats()).toMatchObject({ sent: 0, queued: 20, unconfirmed: 10 });
    await new Promise((r) => setTimeout(r, 100));
    expect(service.ingestCalls.length).toBe(attempts);
  });

  it('keeps a printable machine id and hashes anything else, within the 128-character limit', () => {
    expect(batchIdPrefix('5a25da88-b176-5224-a3fa-8b77c05e24d6', 'run1')).toBe('5a25da88-b176-5224-a3fa-8b77c05e24d6-run1');
    const long = batchIdPrefix('x'.repeat(300), 'run1');
    expect(long).toMatch(/^m[0-9a-f]{24}-run1$/);
    expect(batchIdPrefix('has space', 'r')).toMatch(/^m[0-9a-f]{24}-r$/);
    expect(batchIdPrefix('ünïcode', 'r')).not.toBe(batchIdPrefix('unicode', 'r'));
    expect(`${batchIdPrefix('y'.repeat(64), 'z'.repeat(80))}-999999999`.length).toBeLessThanOrEqual(128);
  });
});
