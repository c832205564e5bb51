/**
 * Started through src/start.cjs by src/start.test.ts: ties up eight of libuv's pool threads
 * (opening FIFOs nobody writes to), asks the pool for one more task, and prints whether it was
 * done; with the default pool of 4 it waits behind the blocked ones.
 */
import { execFileSync } from 'node:child_process';
import { constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'pool-probe-'));
const fifos = Array.from({ length: 8 }, (_, i) => join(dir, `fifo-${i}`));
execFileSync('mkfifo', fifos);
const readers = fifos.map((fifo) => open(fifo, 'r'));
const done = await Promise.race([stat(dir).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 3000))]);
// A FIFO opened for reading and writing at once never blocks, and lets its readers in.
for (const fifo of fifos) openSync(fifo, constants.O_RDWR);
await Promise.all(readers);
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ anotherTaskDone: done }));
process.exit(0);
