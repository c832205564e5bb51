/**
 * Where the console app's build is, and whether it must be made (again): missing, or older than
 * the newest file of its sources (src/console/app, and the device page's style sheet it imports).
 * CommonJS so that `npm start` (start.cjs) asks before anything else runs; the build itself is
 * tools/build-console.ts. Relative to this file: in the repository the build is build/console/,
 * in a compiled build (dist/src/console) it is dist/build/console/, made by `npm run build`.
 */
'use strict';
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join, resolve } = require('node:path');

const CONSOLE_DIR = __dirname;
const BUILD_DIR = resolve(__dirname, '../../build/console');
const SOURCES = [join(CONSOLE_DIR, 'app'), join(CONSOLE_DIR, 'console.css')];

/** The newest modification time of a file, or of any file under a directory. */
function newestMs(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestMs(join(path, name))));
}

/** 'missing', 'stale' or undefined (current). Without the sources (a compiled build) only 'missing' can be said. */
function consoleBuildNeeded(buildDir = BUILD_DIR, sources = SOURCES) {
  const index = join(buildDir, 'index.html');
  if (!existsSync(index)) return 'missing';
  return Math.max(...sources.map(newestMs)) > statSync(index).mtimeMs ? 'stale' : undefined;
}

module.exports = { BUILD_DIR, consoleBuildNeeded };
