/**
 * Started through src/start.cjs by src/start.test.ts: has chDB write the same 62 MB result five
 * times and prints the page faults each took (a page the process kept costs none), with its pid.
 * Then it stays up: it echoes Node's messages back and stops on SIGTERM.
 */
import { Session } from 'chdb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'memory-probe-'));
const session = new Session(dir);
const faults: number[] = [];
for (let i = 0; i < 5; i++) {
  const before = process.resourceUsage().minorPageFault;
  const result = await session.queryAsync('SELECT repeat(toString(number % 10), 2500) FROM numbers(25000)', { format: 'TabSeparatedRaw' });
  if (result.bytes().byteLength < 62_500_000) throw new Error('the result is smaller than asked');
  faults.push(process.resourceUsage().minorPageFault - before);
  // The result's JavaScript copy is freed now, not whenever the collector would come: on a loaded
  // machine a late collection left it alive, and the next result took fresh memory.
  (globalThis as { gc?: () => void }).gc?.();
}
session.close();
rmSync(dir, { recursive: true, force: true });
// Ready for the test's SIGTERM and messages before it is told the figures: a signal that came
// between the print and these lines ended the process as a signal's default does.
process.on('message', (message) => process.send!({ echo: message }));
process.on('SIGTERM', () => process.exit(0));
setInterval(() => undefined, 60_000);
console.log(JSON.stringify({ pid: process.pid, faults }));
