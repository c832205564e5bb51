/**
 * Reads the records query's output (search.ts) without parsing a record. Its lines are of two
 * kinds, in any order:
 * - a record: its JSON (one instance searched) or `<instance id>\t<JSON>` (several);
 * - an instance's counts: `\t<instance id>\t<total>\t<found>` (a record line never starts with a tab).
 *
 * Each instance's records become one JSON array. One instance, the common case: the newlines
 * become the array's commas in place, so the page goes out as slices of the engine's own buffer.
 * Several: each instance's records are cut out of the lines and joined (one copy). Lines the
 * pages do not hold on to are given back at once (infra/lent-bytes.ts); the pages' own are given
 * back by whoever writes them (RawJson.release).
 */
import { giveBack } from '../infra/lent-bytes.js';
import { RawJson } from '../infra/raw-json.js';

const NEWLINE = 0x0a;
const TAB = 0x09;
const COMMA = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
const EMPTY_ARRAY = Buffer.from('[]');

export interface PageRecords {
  /** The records as one JSON array. */
  flows: RawJson;
  count: number;
  /** Flows of the instance in the window, and those of them matching the sentence. */
  total: number;
  found: number;
}

export function pagesFromLines(lines: Buffer, customerIds: readonly string[]): Map<string, PageRecords> {
  const pages = new Map<string, PageRecords>(customerIds.map((id) => [id, { flows: new RawJson([EMPTY_ARRAY]), count: 0, total: 0, found: 0 }]));
  const { records, counts } = customerIds.length === 1 ? splitOneCountLine(lines) : splitCountLines(lines);
  for (const line of counts) {
    const [id, total, found] = line.toString('latin1').split('\t');
    const page = pages.get(id!);
    if (page) Object.assign(page, { total: Number(total), found: Number(found) });
  }
  if (customerIds.length === 1) {
    const page = pages.get(customerIds[0]!)!;
    const segments = records.map(joinLinesInPlace).filter((s) => s.count > 0);
    if (segments.length) {
      page.flows = new RawJson([OPEN, ...segments.flatMap((s, i) => (i ? [COMMA, s.joined] : [s.joined])), CLOSE]);
      page.count = segments.reduce((n, s) => n + s.count, 0);
    } else {
      giveBack(lines);
    }
    return pages;
  }
  const byInstance = new Map<string, Buffer[]>();
  for (const segment of records) {
    for (let start = 0; start < segment.length; ) {
      const end = lineEnd(segment, start);
      const tab = segment.indexOf(TAB, start);
      if (tab < 0 || tab > end) throw new Error('search page: a line without its instance id');
      const id = segment.toString('latin1', start, tab);
      let list = byInstance.get(id);
      if (!list) byInstance.set(id, (list = []));
      if (list.length) list.push(COMMA);
      list.push(segment.subarray(tab + 1, end));
      start = end + 1;
    }
  }
  for (const [id, list] of byInstance) {
    const page = pages.get(id);
    if (page) Object.assign(page, { flows: new RawJson([OPEN, Buffer.concat(list), CLOSE]), count: (list.length + 1) / 2 });
  }
  giveBack(lines);
  return pages;
}

/**
 * As splitCountLines for one instance, whose one count line is in practice the first or the last
 * (the union's two branches finish one after the other): looked for there first, which spares a
 * scan of the whole page for it (~2.5 ms of a 25,000-record page).
 */
function splitOneCountLine(buf: Buffer): { records: Buffer[]; counts: Buffer[] } {
  if (buf[0] === TAB) {
    const end = lineEnd(buf, 0);
    return { counts: [buf.subarray(1, end)], records: end + 1 < buf.length ? [buf.subarray(end + 1)] : [] };
  }
  const last = buf.lastIndexOf(NEWLINE, buf.length - 2) + 1;
  if (last > 0 && buf[last] === TAB) return { counts: [buf.subarray(last + 1, lineEnd(buf, last))], records: [buf.subarray(0, last)] };
  return splitCountLines(buf);
}

/** The runs of record lines between the count lines, and the count lines without their leading tab. */
function splitCountLines(buf: Buffer): { records: Buffer[]; counts: Buffer[] } {
  const records: Buffer[] = [];
  const counts: Buffer[] = [];
  let runStart = 0;
  let at = buf[0] === TAB ? 0 : indexOfCountLine(buf, 0);
  while (at >= 0) {
    if (at > runStart) records.push(buf.subarray(runStart, at));
    const end = lineEnd(buf, at);
    counts.push(buf.subarray(at + 1, end));
    runStart = end + 1;
    at = indexOfCountLine(buf, runStart - 1);
  }
  if (runStart < buf.length) records.push(buf.subarray(runStart));
  return { records, counts };
}

const COUNT_LINE_START = Buffer.from('\n\t');

/** Where the next count line starts at or after the newline at `from`, or -1. */
function indexOfCountLine(buf: Buffer, from: number): number {
  const at = buf.indexOf(COUNT_LINE_START, from);
  return at < 0 ? -1 : at + 1;
}

function lineEnd(buf: Buffer, from: number): number {
  const at = buf.indexOf(NEWLINE, from);
  return at < 0 ? buf.length : at;
}

/** `a\nb\nc\n` → `a,b,c`: the separators rewritten in place, the last one cut off. */
function joinLinesInPlace(buf: Buffer): { joined: Buffer; count: number } {
  const last = buf[buf.length - 1] === NEWLINE ? buf.length - 1 : buf.length;
  if (last === 0) return { joined: buf.subarray(0, 0), count: 0 };
  let count = 1;
  for (let at = buf.indexOf(NEWLINE); at >= 0 && at < last; at = buf.indexOf(NEWLINE, at + 1), count++) buf[at] = COMMA[0]!;
  return { joined: buf.subarray(0, last), count };
}
