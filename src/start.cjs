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
 * - The compiled service (dist/src/main.js, `npm run build`) when there is one: it needs neither
 *   TypeScript nor the dev dependencies (README, Production). Otherwise main.ts through tsx.
 * `node src/start.cjs ENTRY` starts another entry the same way (the benchmarks: TypeScript).
 */
'use strict';
process.env.UV_THREADPOOL_SIZE ??= '16';

const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
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
  const entry = serviceEntry();
  if (!entry) {
    console.error('npm start: no build (dist/) and no generated sources (src/generated/): run npm ci, or npm run build before npm ci --omit=dev');
    process.exit(1);
  }
  if (entry === resolve(__dirname, 'main.ts')) buildConsoleWhenNeeded();
  start(entry).catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

/**
 * The module to run: the one named on the command line, else the build, else the source, which
 * needs what a full install generates (the Prisma client, the typed operations); undefined when
 * there is neither. A build older than the source it was made from is passed over (with a line
 * saying so) when the source can run: a developer who built once would otherwise run stale code.
 */
function serviceEntry() {
  if (process.argv[2]) return resolve(process.argv[2]);
  const built = resolve(__dirname, '../dist/src/main.js');
  const source = existsSync(resolve(__dirname, 'generated/prisma/client.ts')) ? resolve(__dirname, 'main.ts') : undefined;
  if (!existsSync(built)) return source;
  if (source && newestSourceMs(__dirname) > statSync(built).mtimeMs) {
    console.error('npm start: dist/ is older than src/, so the source runs; npm run build makes the build current');
    return source;
  }
  return built;
}

/** The latest modification time of the TypeScript under `dir`, generated code aside. */
function newestSourceMs(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = resolve(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'generated') newest = Math.max(newest, newestSourceMs(path));
    else if (entry.isFile() && entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Running from source: the console app is built first when its build is missing or older than its
 * sources (src/console/console-build.cjs), so a clone's `npm start` serves a current /console. A
 * failed build is said and the service starts anyway (/console then answers 503 saying so).
 */
function buildConsoleWhenNeeded() {
  const needed = require('./console/console-build.cjs').consoleBuildNeeded();
  if (!needed) return;
  console.error(`npm start: the console build is ${needed}; building it (tools/build-console.ts)`);
  const build = spawnSync(process.execPath, ['--import', 'tsx', resolve(__dirname, '../tools/build-console.ts')], { stdio: 'inherit' });
  if (build.status !== 0) console.error('npm start: the console did not build; the service starts without it');
}

/** JavaScript is imported as it is; TypeScript through tsx, registered first. */
async function start(entry) {
  if (!entry.endsWith('.js')) (await import('tsx/esm/api')).register();
  return import(pathToFileURL(entry).href);
}
