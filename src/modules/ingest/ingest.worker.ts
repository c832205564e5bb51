/**
 * An ingest worker (ingest-workers.ts): decompresses and parses collectors' batches, checks their
 * records and encodes the valid ones as Native blocks, off the API thread. A batch (its JSON text,
 * or its Native block as read) stays here until the API thread releases it, to encode some of its
 * records again if asked.
 */
import { parentPort } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';
import { DomainError, badRequest } from '../../errors.js';
import { parseBody, tooLarge } from '../../http/kit.js';
import { convertFlows } from '../../flowstore/ingest-convert.js';
import { type FlowRow, type RowStamp, flowRowsBlock, flowToRow } from '../../flowstore/ingest-rows.js';
import { NativeBatch, NativeBatchError } from '../../flowstore/native-batch.js';
import { atOnce } from '../../flowstore/turns.js';
import type { BatchEncoding, BatchEnvelope, IngestCall, IngestReply, ReplyBody } from './ingest-workers.protocol.js';
import { MAX_FLOWS_PER_BATCH, MAX_JSON_BYTES, batchTooLarge } from './ingest-limits.js';

const port = parentPort!;

// At the API thread's priority: lowered (as the engine's threads are, chdb-thread.worker.ts), the
// thread got so little of a machine busy with other work that a one-record batch took a second.

type Job =
  | {
      text: Buffer;
      /** The parsed body until its records are converted. */
      body?: Record<string, unknown>;
      stamp?: RowStamp;
    }
  | { native: NativeBatch; stamp?: RowStamp };

const jobs = new Map<number, Job>();

port.on('message', (call: IngestCall) => {
  const reply = (body: ReplyBody, transfer: ArrayBuffer[] = []) => {
    if ('call' in call) port.postMessage({ ...body, call: call.call } satisfies IngestReply, transfer);
  };
  try {
    switch (call.op) {
      case 'parse': {
        const bytes = call.encoding.gzip ? gunzipBody(call.body) : Buffer.from(call.body.buffer, call.body.byteOffset, call.body.byteLength);
        if (call.encoding.format === 'native') {
          const native = readNative(bytes);
          jobs.set(call.job, { native });
          return reply({ ok: true, envelope: nativeEnvelope(call.encoding, native) });
        }
        const body = parseBody(bytes, 'application/json');
        jobs.set(call.job, { text: bytes, body });
        return reply({ ok: true, envelope: envelopeOf(body) });
      }
      case 'convert': {
        const job = jobOf(call.job);
        job.stamp = call.stamp;
        if ('native' in job) {
          const { rejected, days } = job.native.convert(call.stamp, call.window);
          const slices = days.map((slice) => ({ ...slice, block: ownBytes(job.native.block(call.stamp, slice.indexes)) }));
          return reply(
            { ok: true, converted: { rejected, slices } },
            slices.map((s) => s.block.buffer as ArrayBuffer),
          );
        }
        const flows = job.body!.flows as unknown[];
        job.body = undefined;
        const { rows, rejected, days } = atOnce(convertFlows(call.stamp, flows, call.window));
        const slices = days.map((slice) => ({ ...slice, block: ownBytes(flowRowsBlock(slice.indexes.map((i) => rows[i]!))) }));
        return reply(
          { ok: true, converted: { rejected, slices } },
          slices.map((s) => s.block.buffer as ArrayBuffer),
        );
      }
      case 'encode': {
        const job = jobOf(call.job);
        if ('native' in job) {
          const block = ownBytes(job.native.block(job.stamp!, call.indexes));
          return reply({ ok: true, block }, [block.buffer as ArrayBuffer]);
        }
        const flows = (JSON.parse(job.text.toString('utf8')) as { flows: Record<string, unknown>[] }).flows;
        const rows: FlowRow[] = call.indexes.map((i) => flowToRow(job.stamp!, flows[i]!, i));
        const block = ownBytes(flowRowsBlock(rows));
        return reply({ ok: true, block }, [block.buffer as ArrayBuffer]);
      }
      case 'release':
        jobs.delete(call.job);
        return;
    }
  } catch (error) {
    if (call.op === 'parse') jobs.delete(call.job);
    if (error instanceof DomainError) return reply({ ok: false, refusal: { status: error.status, code: error.code, message: error.message } });
    return reply({ ok: false, error: error instanceof Error ? error.message : String(error) });
  }
});

function jobOf(id: number): Job {
  const job = jobs.get(id);
  if (!job) throw new Error(`ingest worker: no batch ${id}`);
  return job;
}

function gunzipBody(body: Uint8Array): Buffer {
  try {
    return gunzipSync(body, { maxOutputLength: MAX_JSON_BYTES });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(MAX_JSON_BYTES);
    throw new DomainError(400, 'invalid_encoding', 'Request body is not valid gzip');
  }
}

function readNative(bytes: Buffer): NativeBatch {
  try {
    return NativeBatch.read(bytes, MAX_FLOWS_PER_BATCH, () => {
      throw batchTooLarge();
    });
  } catch (error) {
    if (error instanceof NativeBatchError) throw badRequest('invalid_request', `Native batch: ${error.message}`);
    throw error;
  }
}

/** A Native batch's ids come in headers: the same checks apply to them as to a JSON batch's. */
function nativeEnvelope(encoding: Extract<BatchEncoding, { format: 'native' }>, native: NativeBatch): BatchEnvelope {
  return { batch_id: encoding.batch_id, node_id: encoding.node_id, flows: native.rows };
}

const idOf = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? undefined : false);

function envelopeOf(body: Record<string, unknown>): BatchEnvelope {
  const flows = body.flows === undefined ? 'absent' : Array.isArray(body.flows) ? body.flows.length : 'not_array';
  return { batch_id: idOf(body.batch_id), node_id: idOf(body.node_id), flows };
}

/** The bytes in an ArrayBuffer of their own, which can be handed to another thread without a copy. */
function ownBytes(bytes: Buffer): Uint8Array {
  const own = new Uint8Array(bytes.byteLength);
  own.set(bytes);
  return own;
}
