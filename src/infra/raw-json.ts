/**
 * JSON text that is already written — by ClickHouse, for a page of flow records — carried through
 * GraphQL and out to the socket without being parsed and serialized again.
 *
 * A `RawJson` stands for one JSON value. `serializeJson` writes a response that contains some:
 * the envelope around them is serialized as usual, and each raw value is spliced in as the bytes
 * it already is. Anything else that meets one (a plain JSON.stringify, a GraphQL client's
 * serializer) gets the parsed value from `toJSON`, so a raw value is never wrong, only slower.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { giveBack } from './lent-bytes.js';

export class RawJson {
  /** `chunks` concatenated are the JSON text of one value. */
  constructor(readonly chunks: readonly Uint8Array[]) {}

  parse(): unknown {
    return JSON.parse(Buffer.concat(this.chunks).toString('utf8'));
  }

  toJSON(): unknown {
    return splicing ? splicing.placeholder(this) : this.parse();
  }

  /** Gives back the lent memory its chunks lie in (infra/lent-bytes.ts): call once they are written or copied. */
  release(): void {
    for (const chunk of this.chunks) giveBack(chunk);
  }
}

/** A response's JSON text as chunks to write in order; `release` once they are written or copied. */
export interface SerializedJson {
  chunks: Uint8Array[];
  release(): void;
}

/**
 * Releases `json` once `res` is closed (written or cut off), or at once if it already is: a
 * client that hung up during the search leaves a response whose `close` has been and gone.
 */
export function releaseWhenClosed(res: ServerResponse, json: SerializedJson): void {
  if (res.closed) json.release();
  else res.once('close', json.release);
}

/** Set only during serializeJson's (synchronous) JSON.stringify. */
let splicing: { placeholder(raw: RawJson): string } | undefined;

/**
 * Placeholders start with a secret drawn once per process and a count that never repeats, so no
 * string in the data can be taken for one. (A nonce drawn per response cost ~0.06 ms of a
 * 100-record search's main thread: randomBytes is a synchronous OpenSSL call.)
 */
const PLACEHOLDER_SECRET = randomBytes(16).toString('hex');
let serialized = 0;

/**
 * The JSON text of `value` as chunks to write in order, raw values spliced in. A raw value is
 * first replaced by a placeholder string naming it with the nonce, so no string in the data can
 * be taken for one.
 */
export function serializeJson(value: unknown): SerializedJson {
  const out = stringifyJson(value);
  return typeof out === 'string' ? { chunks: [Buffer.from(out, 'utf8')], release: () => undefined } : out;
}

/** As serializeJson, but plain JSON text when `value` holds no raw value (the common case, not encoded twice). */
export function stringifyJson(value: unknown): string | SerializedJson {
  const nonce = `${PLACEHOLDER_SECRET}${(serialized++).toString(36)}`;
  const raws: RawJson[] = [];
  splicing = { placeholder: (raw) => `${nonce}:${raws.push(raw) - 1}` };
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'null';
  } finally {
    splicing = undefined;
  }
  if (raws.length === 0) return text;

  const chunks: Uint8Array[] = [];
  const marker = `"${nonce}:`;
  let from = 0;
  for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, from)) {
    const close = text.indexOf('"', at + marker.length);
    const raw = raws[Number(text.slice(at + marker.length, close))]!;
    chunks.push(Buffer.from(text.slice(from, at), 'utf8'), ...raw.chunks);
    from = close + 1;
  }
  chunks.push(Buffer.from(text.slice(from), 'utf8'));
  return { chunks, release: () => raws.forEach((raw) => raw.release()) };
}
