/** Messages between the API thread (ingest-workers.ts) and an ingest worker (ingest.worker.ts). */
import type { DaySlice, Rejection, TimeWindow } from '../../flowstore/ingest-convert.js';
import type { RowStamp } from '../../flowstore/ingest-rows.js';
import type { ErrorCode } from '../../errors.js';

/**
 * What the API thread needs of a batch's body before it knows the node: its fields' kinds. An id
 * that is not a string arrives as `false`, so the service's checks read it as it was sent.
 */
export interface BatchEnvelope {
  batch_id: string | false | undefined;
  node_id: string | false | undefined;
  /** The number of records, or why there are none. */
  flows: number | 'absent' | 'not_array';
}

/**
 * How a batch's body is sent: gzipped or not, JSON or one Native block (docs/collector-protocol.md
 * 4.1), whose batch and node ids come in headers.
 */
export type BatchEncoding = { gzip: boolean; format: 'json' } | { gzip: boolean; format: 'native'; batch_id: string | undefined; node_id: string | undefined };

/** A call from the API thread: `call` numbers it for its reply (a release has none). */
export type IngestCall =
  | { op: 'parse'; call: number; job: number; body: Uint8Array; encoding: BatchEncoding }
  | { op: 'convert'; call: number; job: number; stamp: RowStamp; window: TimeWindow }
  | { op: 'encode'; call: number; job: number; indexes: readonly number[] }
  | { op: 'release'; job: number };

export interface WireSlice extends DaySlice {
  block: Uint8Array;
}

export type ReplyBody =
  | { ok: true; envelope?: BatchEnvelope; converted?: { rejected: Rejection[]; slices: WireSlice[] }; block?: Uint8Array }
  /** `refusal`: the body itself is refused (an HTTP error the service answers with). */
  | { ok: false; refusal?: { status: number; code: ErrorCode; message: string }; error?: string };

export type IngestReply = { call: number } & ReplyBody;
