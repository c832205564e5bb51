/**
 * Messages between ChdbThreadEngine (chdb-thread.ts) and its worker (chdb-thread.worker.ts), and
 * the typed errors' trip across (a structured clone keeps an Error's message, not its class).
 */
import type { InsertOptions, LinesFormat, QueryOptions } from './engine.js';
import { FlowEngineError, FlowQueryAbortedError, FlowQueryTimeoutError } from './errors.js';
import type { SlabResult } from './chdb-thread.slabs.js';
import type { Params } from './sql.js';

/** QueryOptions without the signal, which cannot cross: an abort is a message of its own. */
export type WireQueryOptions = Omit<QueryOptions, 'signal'>;

export type CallBody =
  | { op: 'select'; sql: string; params: Params; opts: WireQueryOptions; format: 'JSONEachRow' | LinesFormat }
  | { op: 'command'; sql: string; params: Params; opts: WireQueryOptions }
  | { op: 'insert'; table: string; values: Uint8Array; opts: Omit<InsertOptions, 'signal'> }
  | { op: 'insertNative'; table: string; columns: readonly string[]; blocks: readonly Uint8Array[]; opts: Omit<InsertOptions, 'signal'> }
  | { op: 'ping' }
  | { op: 'close' };

export type Call = (CallBody & { id: number }) | { id: number; op: 'abort' } | { op: 'free'; slab: number; use: number };

/** A result comes back as `bytes` (transferred) or in a `slab` shared with the API thread (chdb-thread.slabs.ts). */
export type Reply = { id: number; ok: true; bytes?: Uint8Array; slab?: SlabResult; alive?: boolean } | { id: number; ok: false; error: WireError };

/** The worker's first message: the database is open, or why not. */
export type Started = { ready: true } | { ready: false; error: WireError };

export interface WireError {
  name: string;
  message: string;
  code?: string;
  clickhouseCode?: number;
  queryName?: string;
  timeoutMs?: number;
}

export function wireOptions({ signal: _signal, ...rest }: QueryOptions): WireQueryOptions {
  return rest;
}

export function errorToWire(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as Error & Partial<Pick<WireError, 'code' | 'clickhouseCode' | 'queryName' | 'timeoutMs'>>;
  return {
    name: e.name,
    message: e.message,
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(e.clickhouseCode !== undefined ? { clickhouseCode: e.clickhouseCode } : {}),
    ...(e.queryName !== undefined ? { queryName: e.queryName } : {}),
    ...(e.timeoutMs !== undefined ? { timeoutMs: e.timeoutMs } : {}),
  };
}

/** The error the worker's engine threw, as the same class (callers map them by class, e.g. timeouts to 504). */
export function errorFromWire(w: WireError): Error {
  switch (w.name) {
    case FlowQueryTimeoutError.name:
      return new FlowQueryTimeoutError(w.queryName, w.timeoutMs ?? 0);
    case FlowQueryAbortedError.name:
      return new FlowQueryAbortedError(w.queryName);
    case FlowEngineError.name:
      return new FlowEngineError(w.message, {
        ...(w.code !== undefined ? { code: w.code } : {}),
        ...(w.clickhouseCode !== undefined ? { clickhouseCode: w.clickhouseCode } : {}),
        ...(w.queryName !== undefined ? { queryName: w.queryName } : {}),
      });
    default:
      return Object.assign(new Error(w.message), { name: w.name });
  }
}
