// Throughput check: `npx tsx tools/collector/flowgen/bench.ts [flows] [flowsPerSecond] [batch]`.
// Reports flows per second of CPU time (the process's user+system time, so
// other load on the machine does not distort it), with and without JSON.

import { backfill } from './index.js';

const total = Number(process.argv[2] ?? 1_000_000);
const flowsPerSecond = Number(process.argv[3] ?? 2000);
const batchSize = Number(process.argv[4] ?? 1000);

function run(serialize: boolean): void {
  const gen = backfill({
    seed: 'bench',
    customerId: 'bench',
    flowsPerSecond,
    hours: 24,
    nowMs: Date.UTC(2025, 0, 15, 18),
    scenarios: ['beacon', 'exfil', 'scan', 'bruteforce', 'dns-tunnel'],
  });
  const cpu = process.cpuUsage();
  const wall = performance.now();
  let n = 0;
  let bytes = 0;
  while (n < total) {
    const batch = gen.take(batchSize);
    if (batch.length === 0) break;
    if (serialize) for (const record of batch) bytes += JSON.stringify(record).length;
    n += batch.length;
  }
  const used = process.cpuUsage(cpu);
  const cpuSecs = (used.user + used.system) / 1e6;
  const wallSecs = (performance.now() - wall) / 1000;
  console.log(
    `${serialize ? 'generate+JSON' : 'generate     '}: ${n} flows, ${Math.round(n / cpuSecs)} flows/s CPU, ` +
      `${Math.round(n / wallSecs)} flows/s wall${serialize ? `, ${Math.round(bytes / n)} bytes/flow` : ''}`,
  );
}

run(false);
run(true);
