/**
 * Turns the page query's output (one JSON record per line; `<instance id>\t` first when the search
 * covers several instances) into a JSON array per instance, without parsing a record.
 *
 * One instance, the common case: the newlines become the array's commas in place, so the page
 * goes out as the engine's own buffer. Several: each instance's records are cut out of the lines
 * and joined (one copy).
 */
import { RawJson } from '../infra/raw-json.js';

const NEWLINE = 0x0a;
const TAB = 0x09;
const COMMA = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
const EMPTY: PageRecords = { flows: new RawJson([Buffer.from('[]')]), count: 0 };

export interface PageRecords {
  /** The records as one JSON array. */
  flows: RawJson;
  count: number;
}

export function pagesFromLines(lines: Buffer, customerIds: readonly string[]): Map<string, PageRecords> {
  const pages = new Map<string, PageRecords>(customerIds.map((id) => [id, EMPTY]));
  if (lines.length === 0) return pages;
  if (customerIds.length === 1) {
    const { joined, count } = joinLinesInPlace(lines);
    pages.set(customerIds[0]!, { flows: new RawJson([OPEN, joined, CLOSE]), count });
    return pages;
  }
  const records = new Map<string, Buffer[]>();
  for (let start = 0; start < lines.length; ) {
    const end = lineEnd(lines, start);
    const tab = lines.indexOf(TAB, start);
    if (tab < 0 || tab > end) throw new Error('search page: a line without its instance id');
    const id = lines.toString('latin1', start, tab);
    let list = records.get(id);
    if (!list) records.set(id, (list = []));
    if (list.length) list.push(COMMA);
    list.push(lines.subarray(tab + 1, end));
    start = end + 1;
  }
  for (const [id, list] of records) {
    if (pages.has(id)) pages.set(id, { flows: new RawJson([OPEN, Buffer.concat(list), CLOSE]), count: (list.length + 1) / 2 });
  }
  return pages;
}

function lineEnd(buf: Buffer, from: number): number {
  const at = buf.indexOf(NEWLINE, from);
  return at < 0 ? buf.length : at;
}

/** `a\nb\nc\n` → `a,b,c`: the separators rewritten in place, the last one cut off. */
function joinLinesInPlace(buf: Buffer): { joined: Buffer; count: number } {
  const last = buf[buf.length - 1] === NEWLINE ? buf.length - 1 : buf.length;
  let count = 1;
  for (let at = buf.indexOf(NEWLINE); at >= 0 && at < last; at = buf.indexOf(NEWLINE, at + 1), count++) buf[at] = COMMA[0]!;
  return { joined: buf.subarray(0, last), count };
}
