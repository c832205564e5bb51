/**
 * `npm run bench:convert`: CPU per flow of ingest's conversion (docs/flowstore.md "Ingest
 * conversion"), as an ingest worker does it on each batch, beside JSON.parse of the same batch
 * text as a same-run baseline (a slower or busier host moves all three together):
 * - parse: JSON.parse of a collector's batch body;
 * - flowToRow: each record checked and made into a row, `source` included;
 * - encode: the rows as one Native block (flowRowsBlock);
 * - inMemory: flowToRow again over the generator's records, long since in memory: the conversion
 *   without the garbage collector copying a freshly parsed batch, which `flowToRow` above pays;
 * - the same batches as Native blocks (docs/collector-protocol.md 4.1, as the reference collector
 *   encodes them): nativeRead (the block into typed columns), nativeCheck (every record checked,
 *   by day) and nativeBlock (the insert block, `source` included).
 * BENCH_FLOWS flows (default 40,000) in BENCH_BATCH-flow batches (default 5,000); each figure is the
 * median of BENCH_ROUNDS rounds (default 7) after one warm-up round.
 */
import { type FlowRow, flowRowsBlock, flowToRow } from '../../src/flowstore/ingest-rows.js';
import { NativeBatch } from '../../src/flowstore/native-batch.js';
import { createFlowGenerator } from '../collector/flowgen/index.js';
import { encodeNativeBatch } from '../collector/native-batch.js';
import { median } from './stats.js';

const totalFlows = Number(process.env.BENCH_FLOWS ?? 40_000);
const batchSize = Number(process.env.BENCH_BATCH ?? 5_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);

const flows = createFlowGenerator({ seed: 7, customerId: 'bench', startMs: Date.now() - 3_600_000, flowsPerSecond: 200, scenarios: [] }).take(totalFlows);
const batches = Array.from({ length: Math.ceil(flows.length / batchSize) }, (_, i) => flows.slice(i * batchSize, (i + 1) * batchSize));
const texts = batches.map((batch, i) => JSON.stringify({ batch_id: `convert-${i}`, flows: batch }));
const blocks = batches.map((batch) => {
  const block = encodeNativeBatch(batch);
  if (!block) throw new Error('the generated flows do not encode as a Native block');
  return block;
});
const window = { retentionDays: undefined, nowMs: Date.now() };
const tooMany = (): never => {
  throw new Error('a batch of more rows than the bench sends');
};

/** CPU microseconds (this process, user + system) that `work` takes. */
function cpuMicros(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

// A batch at a time, as a worker holds one: parsed, converted, encoded, then let go.
const PHASES = ['parse', 'flowToRow', 'encode', 'inMemory', 'nativeRead', 'nativeCheck', 'nativeBlock'] as const;
const samples = Object.fromEntries(PHASES.map((phase) => [phase, [] as number[]])) as Record<(typeof PHASES)[number], number[]>;
let bytes = 0;
for (let round = 0; round <= rounds; round++) {
  const spent = Object.fromEntries(PHASES.map((phase) => [phase, 0])) as Record<(typeof PHASES)[number], number>;
  bytes = 0;
  texts.forEach((text, n) => {
    let batch: Record<string, unknown>[] = [];
    let rows: FlowRow[] = [];
    spent.parse += cpuMicros(() => {
      batch = (JSON.parse(text) as { flows: Record<string, unknown>[] }).flows;
    });
    const stamp = { customerId: 'bench', nodeId: 'convert', batchId: `convert-${n}`, ingestTimeMs: Date.now() };
    spent.flowToRow += cpuMicros(() => {
      rows = batch.map((flow, i) => flowToRow(stamp, flow, i));
    });
    spent.encode += cpuMicros(() => {
      bytes += flowRowsBlock(rows).length;
    });
  });
  blocks.forEach((block, n) => {
    const stamp = { customerId: 'bench', nodeId: 'convert', batchId: `native-${n}`, ingestTimeMs: Date.now() };
    let batch: NativeBatch | undefined;
    let indexes: number[][] = [];
    spent.nativeRead += cpuMicros(() => {
      batch = NativeBatch.read(block, batchSize, tooMany);
    });
    spent.nativeCheck += cpuMicros(() => {
      indexes = batch!.convert(stamp, window).days.map((day) => day.indexes);
    });
    spent.nativeBlock += cpuMicros(() => {
      for (const day of indexes) batch!.block(stamp, day);
    });
  });
  spent.inMemory = cpuMicros(() => {
    for (const [i, flow] of flows.entries())
      flowToRow({ customerId: 'bench', nodeId: 'convert', batchId: 'in-memory', ingestTimeMs: 0 }, flow as unknown as Record<string, unknown>, i);
  });
  if (round === 0) continue;
  for (const phase of PHASES) samples[phase].push(spent[phase] / totalFlows);
}

const parse = median(samples.parse);
console.log(
  `${totalFlows} flows in batches of ${batchSize}, ${(bytes / totalFlows).toFixed(0)} Native bytes per flow; CPU µs per flow, median of ${rounds} rounds`,
);
for (const [name, xs] of Object.entries(samples)) {
  const m = median(xs);
  console.log(`${name.padEnd(10)} ${m.toFixed(1).padStart(6)} µs  ×${(m / parse).toFixed(2)} of parse   (rounds: ${xs.map((x) => x.toFixed(1)).join(' ')})`);
}
const total = (phases: readonly (typeof PHASES)[number][]) => phases.reduce((sum, phase) => sum + median(samples[phase]), 0);
const [json, native] = [total(['parse', 'flowToRow', 'encode']), total(['nativeRead', 'nativeCheck', 'nativeBlock'])];
console.log(`a batch in all: JSON ${json.toFixed(1)} µs, Native ${native.toFixed(1)} µs per flow (×${(native / json).toFixed(2)})`);
