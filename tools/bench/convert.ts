/**
 * `npm run bench:convert`: CPU per flow of ingest's conversion (docs/flowstore.md "Ingest
 * conversion"), as an ingest worker does it on each batch, beside JSON.parse of the same batch
 * text as a same-run baseline (a slower or busier host moves all three together):
 * - parse: JSON.parse of a collector's batch body;
 * - flowToRow: each record checked and made into a row, `source` included;
 * - encode: the rows as one Native block (flowRowsBlock);
 * - inMemory: flowToRow again over the generator's records, long since in memory: the conversion
 *   without the garbage collector copying a freshly parsed batch, which `flowToRow` above pays.
 * BENCH_FLOWS flows (default 40,000) in BENCH_BATCH-flow batches (default 5,000); each figure is the
 * median of BENCH_ROUNDS rounds (default 7) after one warm-up round.
 */
import { type FlowRow, flowRowsBlock, flowToRow } from '../../src/flowstore/ingest-rows.js';
import { createFlowGenerator } from '../collector/flowgen/index.js';

const totalFlows = Number(process.env.BENCH_FLOWS ?? 40_000);
const batchSize = Number(process.env.BENCH_BATCH ?? 5_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);

const flows = createFlowGenerator({ seed: 7, customerId: 'bench', startMs: Date.now() - 3_600_000, flowsPerSecond: 200, scenarios: [] }).take(totalFlows);
const texts = Array.from({ length: Math.ceil(flows.length / batchSize) }, (_, i) =>
  JSON.stringify({ batch_id: `convert-${i}`, flows: flows.slice(i * batchSize, (i + 1) * batchSize) }),
);

/** CPU microseconds (this process, user + system) that `work` takes. */
function cpuMicros(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// A batch at a time, as a worker holds one: parsed, converted, encoded, then let go.
const samples = { parse: [] as number[], flowToRow: [] as number[], encode: [] as number[], inMemory: [] as number[] };
let bytes = 0;
for (let round = 0; round <= rounds; round++) {
  const spent = { parse: 0, flowToRow: 0, encode: 0, inMemory: 0 };
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
  spent.inMemory = cpuMicros(() => {
    for (const [i, flow] of flows.entries())
      flowToRow({ customerId: 'bench', nodeId: 'convert', batchId: 'in-memory', ingestTimeMs: 0 }, flow as unknown as Record<string, unknown>, i);
  });
  if (round === 0) continue;
  for (const phase of ['parse', 'flowToRow', 'encode', 'inMemory'] as const) samples[phase].push(spent[phase] / totalFlows);
}

const parse = median(samples.parse);
console.log(
  `${totalFlows} flows in batches of ${batchSize}, ${(bytes / totalFlows).toFixed(0)} Native bytes per flow; CPU µs per flow, median of ${rounds} rounds`,
);
for (const [name, xs] of Object.entries(samples)) {
  const m = median(xs);
  console.log(`${name.padEnd(10)} ${m.toFixed(1).padStart(6)} µs  ×${(m / parse).toFixed(2)} of parse   (rounds: ${xs.map((x) => x.toFixed(1)).join(' ')})`);
}
