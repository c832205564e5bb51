/**
 * A known leaf of a flow record checked and made into what its column stores (ingest-rows.ts):
 * numeric strings read as numbers, text made well formed, anything else refused by path.
 */
import type { ColumnDef } from './columns.js';
import { FlowIngestError } from './errors.js';

function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  // Lax like the SDK's readers: a numeric string is a number.
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/** The last instant a `DateTime64` column holds (ClickHouse: up to 2299-12-31); later ones are refused. */
export const LATEST_STORED_MS = Date.UTC(2299, 11, 31, 23, 59, 59, 999);

/**
 * A lone UTF-16 surrogate (text cut in the middle of a character) becomes U+FFFD, as any UTF-8
 * encoder makes it: ClickHouse refuses the JSON escape of one, which failed the whole batch.
 */
const wellFormed = (s: string) => (s.isWellFormed() ? s : s.toWellFormed());

/** Why a leaf's value is refused: what it should have been, and (cut short) what it was. */
export const expectedText = (what: string, v: unknown): string => `expected ${what}, got ${JSON.stringify(v)?.slice(0, 80)}`;

/** Refuses a leaf's value, naming the path and what it should have been. */
function refuse(col: ColumnDef, v: unknown, index: number, what: string): never {
  throw new FlowIngestError(index, col.path, expectedText(what, v));
}

/** The value a leaf's column stores; throws FlowIngestError when it has none. */
export function storedValue(col: ColumnDef, v: unknown, index: number): unknown {
  switch (col.kind) {
    case 'string':
    case 'ip':
      return typeof v === 'string' ? wellFormed(v) : refuse(col, v, index, 'a string');
    case 'int': {
      const n = toNumber(v);
      if (n === undefined || !Number.isInteger(n)) return refuse(col, v, index, 'an integer');
      const [lo, hi] = col.intRange!;
      return n >= lo && n <= hi ? n : refuse(col, v, index, `an integer in [${lo}, ${hi}]`);
    }
    case 'float': {
      const n = toNumber(v);
      return n === undefined ? refuse(col, v, index, 'a number') : n;
    }
    case 'bool':
      return typeof v === 'boolean' ? v : refuse(col, v, index, 'true or false');
    case 'timestamp': {
      const n = toNumber(v);
      return n !== undefined && Number.isInteger(n) && n >= 0 && n <= LATEST_STORED_MS ? n : refuse(col, v, index, 'epoch milliseconds up to 2299-12-31');
    }
    case 'string[]':
      return isStringArray(v) ? v.map(wellFormed) : refuse(col, v, index, 'an array of strings');
    case 'float[]':
      return isFiniteArray(v) ? v : refuse(col, v, index, 'an array of finite numbers');
    case 'json':
      return Array.isArray(v) ? JSON.stringify(v) : refuse(col, v, index, 'an array');
  }
}

function isStringArray(v: unknown): v is string[] {
  if (!Array.isArray(v)) return false;
  for (const e of v) if (typeof e !== 'string') return false;
  return true;
}

function isFiniteArray(v: unknown): v is number[] {
  if (!Array.isArray(v)) return false;
  for (const e of v) if (typeof e !== 'number' || !Number.isFinite(e)) return false;
  return true;
}
