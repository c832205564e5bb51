/**
 * The thread behind ChdbThreadEngine (chdb-thread.ts): a ChdbEngine serving its calls. Big results
 * leave in a slab shared with the API thread (chdb-thread.slabs.ts), others by transfer.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { ChdbEngine } from './chdb-engine.js';
import { type Call, type CallBody, type Reply, type Started, errorToWire } from './chdb-thread.protocol.js';
import { transferable } from '../infra/transferable.js';
import { SlabPool } from './chdb-thread.slabs.js';

const port = parentPort!;

// The copy of each result into JavaScript (60 MB for a 25,000-record page) runs on this thread: at
// the lowest priority, as the engine's query threads (chdb-engine.ts), the API's threads go first.
// On Linux a priority is a thread's own, and lowering it needs no privilege.
setPriority(19);

const running = new Map<number, AbortController>();
const slabs = new SlabPool();
let engine: ChdbEngine;

try {
  engine = new ChdbEngine((workerData as { dataDir: string }).dataDir);
  port.postMessage({ ready: true } satisfies Started);
} catch (err) {
  port.postMessage({ ready: false, error: errorToWire(err) } satisfies Started);
  port.close();
}

port.on('message', (call: Call) => {
  if (call.op === 'abort') running.get(call.id)?.abort(new Error('aborted by the caller'));
  else if (call.op === 'free') slabs.free(call.slab, call.use);
  else void serve(call);
});

async function serve(call: CallBody & { id: number }): Promise<void> {
  const controller = new AbortController();
  running.set(call.id, controller);
  const signal = controller.signal;
  try {
    const { bytes, ...rest } = await run(call, signal);
    const slab = bytes && slabs.place(bytes);
    if (slab) port.postMessage({ id: call.id, ok: true, slab, ...rest } satisfies Reply);
    else port.postMessage({ id: call.id, ok: true, ...(bytes ? { bytes } : {}), ...rest } satisfies Reply, bytes ? transferable(bytes) : []);
  } catch (err) {
    port.postMessage({ id: call.id, ok: false, error: errorToWire(err) } satisfies Reply);
  } finally {
    running.delete(call.id);
  }
}

async function run(call: CallBody, signal: AbortSignal): Promise<{ bytes?: Uint8Array; alive?: boolean }> {
  switch (call.op) {
    case 'select':
      return { bytes: await engine.selectBytes(call.sql, call.params, { ...call.opts, signal }, call.format) };
    case 'command':
      await engine.command(call.sql, call.params, { ...call.opts, signal });
      return {};
    case 'insert':
      await engine.insertBytes(call.table, Buffer.from(call.values.buffer, call.values.byteOffset, call.values.byteLength), { ...call.opts, signal });
      return {};
    case 'insertNative':
      await engine.insertNative(
        call.table,
        call.columns,
        call.blocks.map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength)),
        { ...call.opts, signal },
      );
      return {};
    case 'ping':
      return { alive: await engine.ping() };
    case 'close':
      await engine.close();
      return {};
  }
}
