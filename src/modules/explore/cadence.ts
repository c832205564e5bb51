/**
 * The cadence view's rules (wire.md 9.6), pure: from session gaps (their exact quantiles and a
 * log-scale histogram, explore.store.ts) to the gap CDF, the dominant beats and the readout.
 */
import { CDF_QUANTILES, type CadenceFlowRow, type GapRow } from './explore.store.js';

export interface CdfPoint {
  gap_secs: number;
  fraction: number;
}

export interface Cadence {
  cdf: CdfPoint[];
  dominant_intervals: CdfPoint[];
  steppedness: number | null;
  median_gap_secs: number | null;
  stats: Record<string, number>;
  beacon: { flows: number; sources: number; interval_ms: number | null };
  readout: string;
}

/**
 * A quantile q is reported only when there are enough gaps to tell it apart from its neighbours:
 * at least 1 / min(q, 1 − q) gaps (2 for the median, 4 for the quartiles, 100 for p1/p99).
 * Fewer than MIN_CDF_POINTS reportable quantiles is the sparse-data form.
 */
export const MIN_CDF_POINTS = 3;
/** A beat is a peak bin with two neighbours each side: gaps within about ±10% of each other. */
export const BEAT_HALF_WIDTH_BINS = 2;
export const MAX_BEATS = 5;
/** Beats after the first are listed when they hold at least this share of the gaps. */
export const MIN_BEAT_FRACTION = 0.05;

export const SPARSE_CADENCE: Omit<Cadence, 'readout'> & { readout: string } = {
  cdf: [],
  dominant_intervals: [],
  steppedness: null,
  median_gap_secs: null,
  stats: {},
  beacon: { flows: 0, sources: 0, interval_ms: null },
  readout: 'no cadence data',
};

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

export function cdfPoints(gaps: number, quantiles: readonly number[]): CdfPoint[] {
  const points: CdfPoint[] = [];
  CDF_QUANTILES.forEach((q, i) => {
    if (gaps >= Math.ceil(1 / Math.min(q, 1 - q) - 1e-9) && quantiles[i] !== undefined) points.push({ gap_secs: round(quantiles[i]!, 3), fraction: q });
  });
  return points;
}

/**
 * Greedy peak picking on the log histogram: the fullest remaining bin and its neighbours form a
 * beat (gap = their mean gap, fraction = their share of all gaps); repeated up to MAX_BEATS.
 * The first beat is always listed (its fraction is the steppedness); later ones when they carry
 * MIN_BEAT_FRACTION and at least two gaps.
 */
export function beats(g: GapRow): CdfPoint[] {
  const left = new Map<number, { count: number; sum: number }>();
  g.bins.forEach((b, i) => left.set(b, { count: g.counts[i]!, sum: g.sums[i]! }));
  const found: CdfPoint[] = [];
  while (found.length < MAX_BEATS && left.size) {
    let peak: number | undefined;
    for (const [b, v] of left) if (peak === undefined || v.count > left.get(peak)!.count || (v.count === left.get(peak)!.count && b < peak)) peak = b;
    let count = 0;
    let sum = 0;
    for (let b = peak! - BEAT_HALF_WIDTH_BINS; b <= peak! + BEAT_HALF_WIDTH_BINS; b++) {
      const v = left.get(b);
      if (!v) continue;
      count += v.count;
      sum += v.sum;
      left.delete(b);
    }
    const fraction = count / g.gaps;
    if (found.length && (fraction < MIN_BEAT_FRACTION || count < 2)) break;
    found.push({ gap_secs: round(sum / count, 3), fraction: round(fraction, 4) });
  }
  return found;
}

/** `~30s`, `~2m`, `~1.5h`, `~2d`. */
export function formatGap(secs: number): string {
  const fmt = (x: number) => String(x >= 10 ? Math.round(x) : round(x, 1));
  if (secs < 90) return `~${fmt(secs)}s`;
  if (secs < 90 * 60) return `~${fmt(secs / 60)}m`;
  if (secs < 36 * 3600) return `~${fmt(secs / 3600)}h`;
  return `~${fmt(secs / 86_400)}d`;
}

export function steadiness(steppedness: number): string {
  if (steppedness >= 0.6) return 'machine-steady';
  if (steppedness >= 0.3) return 'partly scheduled';
  return 'irregular';
}

export function cadenceOf(g: GapRow, flows: CadenceFlowRow): Cadence {
  const cdf = cdfPoints(g.gaps, g.quantiles);
  if (cdf.length < MIN_CDF_POINTS) return { ...SPARSE_CADENCE, beacon: { ...SPARSE_CADENCE.beacon } };
  const dominant = beats(g);
  const steppedness = dominant[0]?.fraction ?? null;
  const median = cdf.find((p) => p.fraction === 0.5)?.gap_secs ?? null;
  const stats: Record<string, number> = {};
  for (const [field, value] of Object.entries(flows.stats)) if (value !== null) stats[`stats.timing.inter_arrival_secs.${field}`] = round(value, 6);
  const beacon = {
    flows: flows.beacon_flows,
    sources: flows.beacon_sources,
    interval_ms: flows.beacon_interval_ms === null || flows.beacon_flows === 0 ? null : round(flows.beacon_interval_ms, 1),
  };
  const beatText = dominant
    .filter((b, i) => i === 0 || b.fraction >= 0.1)
    .map((b) => `${Math.round(b.fraction * 100)}% at ${formatGap(b.gap_secs)}`)
    .join(' + ');
  const beaconText = beacon.flows
    ? `${beacon.flows} beacon-like flow${beacon.flows === 1 ? '' : 's'} from ${beacon.sources} source${beacon.sources === 1 ? '' : 's'}` +
      (beacon.interval_ms !== null ? ` (~${Math.round(beacon.interval_ms)} ms interval)` : '')
    : 'no beacon-like flows';
  const readout = `${steadiness(steppedness ?? 0)}, sessions beat ${beatText}, ${beaconText}`;
  return { cdf, dominant_intervals: dominant, steppedness, median_gap_secs: median, stats, beacon, readout };
}
