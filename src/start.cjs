/**
 * `npm start`: the service (main.ts) in a process set up before anything in it runs.
 * - libuv's thread pool sized first: chDB's async queries and WebCrypto (every token check) share
 *   it, and at its default of 4 threads four long queries starve token checks (one waited 4 s).
 *   Node creates the pool on its first use, and an ES module entry, or tsx's loader, reads files
 *   through it before any module code runs: setting the size in main.ts came too late and left 4
 *   threads. Only a CommonJS entry is in time.
 * - Memory kept for reuse (memory-reuse.cjs), and V8 flags (below). glibc and V8 read them only
 *   when a process starts, so without them this process starts the service again in one that has
 *   them (relaunch.cjs).
 * `node src/start.cjs ENTRY` starts another TypeScript entry the same way (the benchmarks).
 */
'use strict';
process.env.UV_THREADPOOL_SIZE ??= '16';

const { resolve } = require('node:path');
const { pathToFileURL } = require('node:url');
const { memoryReuseEnvironment } = require('./memory-reuse.cjs');
const { relaunch, stopWithLauncher } = require('./relaunch.cjs');

/**
 * `--no-memory-reducer`: once allocation slows, V8's memory reducer compacts the whole heap to give
 * memory back, two 20–57 ms pauses of the event loop in a row whenever traffic eases, and token
 * requests beside them waited as long (docs/search.md, Results, session 14). The heap (~60 MB
 * under the search benchmark) stays the size the load needed, and is collected as usual.
 */
const V8_FLAGS = ['--no-memory-reducer'];

const memory = memoryReuseEnvironment(process.env);
const missingFlags = V8_FLAGS.filter((flag) => !process.execArgv.includes(flag));
if (memory.restart || missingFlags.length > 0) relaunch(memory.env, missingFlags);
else {
  Object.assign(process.env, memory.env);
  stopWithLauncher();
  const entry = process.argv[2] ? pathToFileURL(resolve(process.argv[2])).href : './main.ts';
  import('tsx/esm/api')
    .then(({ register }) => {
      register();
      return import(entry);
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
