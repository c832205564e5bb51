/**
 * A time window as the conditions hourly rollups can answer (egress-rollups.ts, terms-rollups.ts):
 * the whole hours inside it on the rollup's hour key, and the partial hours at either end on the
 * timestamp, for statements stacked with UNION ALL. So any window in milliseconds gets the exact
 * answer while most of it is read from a rollup.
 */
import type { ParamBag } from './sql.js';

const HOUR_MS = 3_600_000;
const TIMESTAMP = '`timestamp`';
/** The hour a flow counts in, as every rollup keys it (UTC). */
export const HOUR_SQL = `toStartOfHour(${TIMESTAMP})`;

/** `expr` in [fromMs, toMs). */
const during = (expr: string, fromMs: number, toMs: number, p: ParamBag) =>
  `${expr} >= fromUnixTimestamp64Milli(${p.add(fromMs, 'Int64')}, 'UTC') AND ${expr} < fromUnixTimestamp64Milli(${p.add(toMs, 'Int64')}, 'UTC')`;

/**
 * The window [startMs, endMs] (inclusive) as one to two conditions: the whole hours (first, the
 * rollup's) and the partial hours at either end, or the window itself when it holds no whole hour.
 * `covering` takes instead the whole hours that cover the window: a superset, from the rollup alone.
 */
export function hourSplit(startMs: number, endMs: number, p: ParamBag, { covering = false } = {}): string[] {
  const end = endMs + 1;
  const firstHour = Math[covering ? 'floor' : 'ceil'](startMs / HOUR_MS) * HOUR_MS;
  const lastHour = Math[covering ? 'ceil' : 'floor'](end / HOUR_MS) * HOUR_MS;
  if (firstHour >= lastHour) return [during(TIMESTAMP, startMs, end, p)];
  const edges = (
    [
      [startMs, firstHour],
      [lastHour, end],
    ] as const
  ).filter(([from, to]) => from < to);
  const hours = during(HOUR_SQL, firstHour, lastHour, p);
  return edges.length ? [hours, `(${edges.map(([from, to]) => `(${during(TIMESTAMP, from, to, p)})`).join(' OR ')})`] : [hours];
}
