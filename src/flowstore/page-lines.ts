/**
 * Reads the records query's output (search.ts) without parsing a record. Its rows are of two
 * kinds, in any order:
 * - a record: its JSON (one instance searched) or `<instance id>\t<JSON>` (several);
 * - an instance's counts: `\t<instance id>\t<total>\t<found>`, or `\t<total>\t<found>` when one
 *   instance is searched (a record never starts with a tab, and the engine's JSON text holds no
 *   raw tab or newline).
 *
 * One instance, the common case: the engine joins the rows with commas (engine.ts RowSeparation),
 * so the records are already the inside of the page's JSON array and go out as slices of the
 * engine's own buffer; only the count row is looked for, at either end first. Several: a row per
 * line, and each instance's records are cut out of the lines and joined (one copy). Bytes the
 * pages do not hold on to are given back at once (infra/lent-bytes.ts); the pages' own are given
 * back by whoever writes them (RawJson.release).
 */
import { giveBack } from '../infra/lent-bytes.js';
import { RawJson } from '../infra/raw-json.js';

const NEWLINE = 0x0a;
const TAB = 0x09;
const COMMA = 0x2c;
const COMMA_BYTES = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
const EMPTY_ARRAY = Buffer.from('[]');

export interface PageRecords {
  /** The records as one JSON array. */
  flows: RawJson;
  /** Flows of the instance in the window, and those of them matching the sentence. */
  total: number;
  found: number;
}

const emptyPage = (): PageRecords => ({ flows: new RawJson([EMPTY_ARRAY]), total: 0, found: 0 });

/** The one searched instance's page from rows joined by commas. */
export function pageFromCommaRows(rows: Buffer): PageRecords {
  const page = emptyPage();
  const { counts, records } = splitCountRow(rows);
  if (counts) {
    const [total, found] = counts.toString('latin1').split('\t');
    Object.assign(page, { total: Number(total), found: Number(found) });
  }
  if (records.length) page.flows = new RawJson([OPEN, ...records.flatMap((r, i) => (i ? [COMMA_BYTES, r] : [r])), CLOSE]);
  else giveBack(rows);
  return page;
}

/**
 * The count row (without its leading tab) and the runs of records around it. The union's two
 * branches finish one after the other, so the count row is in practice the first or the last:
 * looked for there first, which spares a scan of the whole page for it.
 */
function splitCountRow(rows: Buffer): { counts?: Buffer; records: Buffer[] } {
  if (rows.length === 0) return { records: [] };
  if (rows[0] === TAB) {
    const end = rowEnd(rows, 0);
    return { counts: rows.subarray(1, end), records: end < rows.length ? [rows.subarray(end + 1)] : [] };
  }
  const last = rows.lastIndexOf(COMMA);
  if (last >= 0 && rows[last + 1] === TAB) return { counts: rows.subarray(last + 2), records: [rows.subarray(0, last)] };
  const at = rows.indexOf(COUNT_ROW_AFTER_COMMA);
  if (at < 0) return { records: [rows] };
  const end = rowEnd(rows, at + 1);
  return { counts: rows.subarray(at + 2, end), records: [rows.subarray(0, at), rows.subarray(end + 1)].filter((r) => r.length > 0) };
}

const COUNT_ROW_AFTER_COMMA = Buffer.from(',\t');

/** The end of the count row starting at `from` (it holds no comma). */
function rowEnd(rows: Buffer, from: number): number {
  const at = rows.indexOf(COMMA, from);
  return at < 0 ? rows.length : at;
}

/** Several instances' pages from rows a line each. */
export function pagesFromLines(lines: Buffer, customerIds: readonly string[]): Map<string, PageRecords> {
  const pages = new Map<string, PageRecords>(customerIds.map((id) => [id, emptyPage()]));
  const { records, counts } = splitCountLines(lines);
  for (const line of counts) {
    const [id, total, found] = line.toString('latin1').split('\t');
    const page = pages.get(id!);
    if (page) Object.assign(page, { total: Number(total), found: Number(found) });
  }
  const byInstance = new Map<string, Buffer[]>();
  for (const segment of records) {
    for (let start = 0; start < segment.length;) {
      const end = lineEnd(segment, start);
      const tab = segment.indexOf(TAB, start);
      if (tab < 0 || tab > end) throw new Error('search page: a line without its instance id');
      const id = segment.toString('latin1', start, tab);
      let list = byInstance.get(id);
      if (!list) byInstance.set(id, (list = []));
      if (list.length) list.push(COMMA_BYTES);
      list.push(segment.subarray(tab + 1, end));
      start = end + 1;
    }
  }
  for (const [id, list] of byInstance) {
    const page = pages.get(id);
    if (page) page.flows = new RawJson([OPEN, Buffer.concat(list), CLOSE]);
  }
  giveBack(lines);
  return pages;
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
