/**
 * A flow record as a row of the flows table: each known leaf checked and stored in its column,
 * unknown keys kept as extras, the record as search returns it kept as `source`. What a record may
 * be: record-shape.ts; what a leaf may be: record-leaves.ts.
 */
import { hash } from 'node:crypto';
import { COLUMNS, EXTRAS_COLUMN, SOURCE_COLUMN } from './columns.js';
import { FLOWS_TABLE } from './ddl.js';
import type { FlowEngine, InsertOptions } from './engine.js';
import { FlowIngestError } from './errors.js';
import { encodeNativeBlock, encodeNativeBlockInTurns, nativeLayout } from './native-block.js';
import { checkShape } from './record-shape.js';
import { compileRecordWalker } from './record-walker.js';

/** What ingest stamps on every row of a batch. */
export interface RowStamp {
  customerId: string;
  nodeId: string;
  batchId: string;
  /** Stamped as `meta.@ingest_time` on flows that do not carry one; default now. */
  ingestTimeMs?: number;
}

/** Paths the ingest sets itself; values sent for them in a record are ignored. */
export const OWN_PATHS: ReadonlySet<string> = new Set(['id', 'node_id', 'batch_id', 'meta.customer_id']);

/**
 * Every column ingest writes (all but those ClickHouse materializes), in the order of a FlowRow's
 * values, and their layout as one Native block (native-block.ts).
 */
export const INSERT_LAYOUT = nativeLayout([
  ...COLUMNS.filter((c) => !c.materialized).map((c) => ({ name: c.column, type: c.type })),
  { name: EXTRAS_COLUMN, type: 'String' },
  { name: SOURCE_COLUMN, type: 'String' },
]);
export const FLOW_ROW_COLUMNS: readonly string[] = INSERT_LAYOUT.columns.map((c) => c.name);

/** A flows-table row: one value per FLOW_ROW_COLUMNS entry, at the same position (undefined when absent). */
export type FlowRow = unknown[];

/** Where a column's value sits in a FlowRow. */
export function flowRowSlot(column: string): number {
  const slot = FLOW_ROW_COLUMNS.indexOf(column);
  if (slot < 0) throw new Error(`flowRowSlot: ingest writes no column ${column}`);
  return slot;
}

const SLOT = {
  customerId: flowRowSlot('customer_id'),
  nodeId: flowRowSlot('node_id'),
  batchId: flowRowSlot('batch_id'),
  id: flowRowSlot('id'),
  timestamp: flowRowSlot('timestamp'),
  ingestTime: flowRowSlot('meta_ingest_time'),
  extras: flowRowSlot(EXTRAS_COLUMN),
  source: flowRowSlot(SOURCE_COLUMN),
};

/** The walk of a record: known leaves to their slots, the rest kept as extras (record-walker.ts). */
const walkRecord = compileRecordWalker(
  COLUMNS.filter((col) => col.role !== 'derived').map((col) => ({ col, slot: flowRowSlot(col.column) })),
  OWN_PATHS,
);

/** The record id: stable for a given (customer, node, batch, position), so a retried batch repeats it. */
export function recordId(customerId: string, nodeId: string, batchId: string, index: number): string {
  return hash('sha256', `${customerId}\u0000${nodeId}\u0000${batchId}\u0000${index}`, 'base64url').slice(0, 22);
}

/**
 * One flows-table row for a record. Throws FlowIngestError on a bad leaf or shape (record-shape.ts),
 * the first in the record's order.
 */
export function flowToRow(batch: RowStamp, flow: Record<string, unknown>, index: number): FlowRow {
  const row: FlowRow = new Array(FLOW_ROW_COLUMNS.length);
  row[SLOT.customerId] = batch.customerId;
  row[SLOT.nodeId] = batch.nodeId;
  row[SLOT.batchId] = batch.batchId;
  row[SLOT.id] = recordId(batch.customerId, batch.nodeId, batch.batchId, index);
  // The record as search returns it: known leaves as stored, unknown keys as sent, no nulls of
  // known leaves, no empty arrays, no empty objects.
  const record: Record<string, unknown> = {};
  let extras: Record<string, unknown> | undefined;
  try {
    extras = walkRecord(flow, row, record, index);
  } catch (error) {
    // A shape problem anywhere is named before a bad leaf, wherever each sits.
    if (error instanceof FlowIngestError) checkShape(flow, index);
    throw error;
  }
  if (row[SLOT.timestamp] === undefined) throw new FlowIngestError(index, '@timestamp', 'is required');
  const ingestTime = (row[SLOT.ingestTime] ??= batch.ingestTimeMs ?? Date.now());
  row[SLOT.extras] = extras ? JSON.stringify(extras) : '';
  // The known `meta` leaves win over whatever else was sent as `meta`. An own object there is one
  // the walk made, so it is completed in place (keys in the same order as a copy would have them).
  const meta = record.meta;
  if (meta !== null && typeof meta === 'object' && !Array.isArray(meta) && Object.hasOwn(record, 'meta')) {
    (meta as Record<string, unknown>).customer_id = batch.customerId;
    (meta as Record<string, unknown>)['@ingest_time'] = ingestTime;
  } else {
    const sent = meta !== null && typeof meta === 'object' && !Array.isArray(meta) ? meta : {};
    record.meta = { ...sent, customer_id: batch.customerId, '@ingest_time': ingestTime };
  }
  row[SLOT.source] = JSON.stringify(record);
  return row;
}

/** A row's timestamp (epoch ms). */
export const rowTime = (row: FlowRow) => row[SLOT.timestamp] as number;

/** Rows made by flowToRow as one Native block of FLOW_ROW_COLUMNS (in a worker thread). */
export const flowRowsBlock = (rows: readonly FlowRow[]): Buffer => encodeNativeBlock(INSERT_LAYOUT, rows);

/** The same, over turns of the event loop (on the API thread). */
export const flowRowsBlockInTurns = (rows: readonly FlowRow[]): Promise<Buffer> => encodeNativeBlockInTurns(INSERT_LAYOUT, rows);

/** Inserts rows made by flowToRow into the flows table (or a table like it), as one Native block. */
export async function insertFlowRows(engine: FlowEngine, rows: readonly FlowRow[], opts: InsertOptions & { table?: string } = {}): Promise<void> {
  const { table = FLOWS_TABLE, ...insert } = opts;
  await engine.insertNative(table, FLOW_ROW_COLUMNS, [await flowRowsBlockInTurns(rows)], insert);
}
