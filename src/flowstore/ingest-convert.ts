/**
 * A batch's records as rows, each checked on its own: the work of ingest before the insert, the
 * same on the API thread (tests, tools: ingestFlowBatch) and in an ingest worker (collectors'
 * batches, src/modules/ingest/ingest.worker.ts).
 */
import { FlowIngestError } from './errors.js';
import { type FlowRow, type RowStamp, flowToRow, rowTime } from './ingest-rows.js';
import type { Steps } from './turns.js';

export interface Rejection {
  index: number;
  error: string;
}

/** What the table keeps, to refuse a record it would not: its retention in days and the clock. */
export interface TimeWindow {
  retentionDays: number | undefined;
  nowMs: number;
}

interface ConvertedBatch {
  /** Each kept record's row, at its index in the batch; the others are absent. */
  rows: (FlowRow | undefined)[];
  rejected: Rejection[];
  /** The kept records by UTC day, days in ascending order: their indexes and time span. */
  days: DaySlice[];
}

/** A batch's kept records of one UTC day: their indexes, first and last timestamps (epoch ms). */
export interface DaySlice {
  day: number;
  indexes: number[];
  fromMs: number;
  toMs: number;
}

export const DAY_MS = 86_400_000;

/**
 * How far ahead of the server's clock a record may be timestamped: a collector whose clock is off
 * by hours (a local time sent as UTC is at most 14 h) is still taken. Later records are refused:
 * they would sit outside every search window until that time came, outlive the retention, and
 * (past 2106 and 2149) overflow the TTL's DateTime and the partition's Date.
 */
const FUTURE_TOLERANCE_MS = DAY_MS;

/**
 * Why a record's timestamp is outside what the table keeps, or undefined: a record older than the
 * retention (the TTL, `timestamp + N days`) is deleted by ClickHouse as it is inserted, so it is
 * refused rather than acknowledged and lost; one too far ahead is refused (FUTURE_TOLERANCE_MS).
 */
export function outsideWindow(ts: number, { retentionDays, nowMs }: TimeWindow): string | undefined {
  if (retentionDays !== undefined && ts + retentionDays * DAY_MS <= nowMs) {
    return `${new Date(ts).toISOString()} is older than the flow store's retention of ${retentionDays} days, so it would be deleted at once`;
  }
  if (ts > nowMs + FUTURE_TOLERANCE_MS)
    return `${new Date(ts).toISOString()} is more than ${FUTURE_TOLERANCE_MS / 3_600_000} hours ahead of the server's clock`;
  return undefined;
}

/** Records converted between two pauses (about 25 ms of work). */
const RECORDS_PER_STEP = 500;

/**
 * Converts every record: a bad one is rejected on its own, never failing the batch. Records keep
 * their index in the batch, so their ids (ingest-rows.ts recordId) are stable across retries.
 */
export function* convertFlows(stamp: RowStamp, flows: readonly unknown[], window: TimeWindow): Steps<ConvertedBatch> {
  const rows: (FlowRow | undefined)[] = new Array(flows.length);
  const rejected: Rejection[] = [];
  const days = new DaySlicer();
  for (let index = 0; index < flows.length; index++) {
    if (index % RECORDS_PER_STEP === RECORDS_PER_STEP - 1) yield;
    const flow = flows[index];
    if (typeof flow !== 'object' || flow === null || Array.isArray(flow)) {
      rejected.push({ index, error: 'a flow record must be a JSON object' });
      continue;
    }
    let row: FlowRow;
    try {
      row = flowToRow(stamp, flow as Record<string, unknown>, index);
    } catch (error) {
      if (!(error instanceof FlowIngestError)) throw error;
      rejected.push({ index, error: error.message });
      continue;
    }
    const outside = outsideWindow(rowTime(row), window);
    if (outside) {
      rejected.push({ index, error: new FlowIngestError(index, '@timestamp', outside).message });
      continue;
    }
    rows[index] = row;
    days.add(index, rowTime(row));
  }
  return { rows, rejected, days: days.slices() };
}

/** Kept records gathered by UTC day, whatever the batch's format. */
export class DaySlicer {
  private readonly byDay = new Map<number, DaySlice>();

  add(index: number, ts: number): void {
    const day = Math.floor(ts / DAY_MS);
    const slice = this.byDay.get(day);
    if (!slice) this.byDay.set(day, { day, indexes: [index], fromMs: ts, toMs: ts });
    else {
      slice.indexes.push(index);
      if (ts < slice.fromMs) slice.fromMs = ts;
      if (ts > slice.toMs) slice.toMs = ts;
    }
  }

  /** The slices, days in ascending order. */
  slices(): DaySlice[] {
    return [...this.byDay.values()].sort((a, b) => a.day - b.day);
  }
}
