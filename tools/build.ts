/**
 * `npm run build`: the service and the admin CLI compiled to dist/ (tsconfig.build.json), with
 * the files they read at run time copied beside the code that reads them, so that after
 * `npm ci --omit=dev` they run with neither TypeScript nor the dev dependencies (README,
 * Production). dist/ is laid out like the repository (dist/src, dist/rest-compat, dist/prisma,
 * dist/build/console: the console app built by Vite): every path a module computes from its own
 * location finds the same file.
 *
 *   npx tsx tools/build.ts [--out-dir DIR]     (default dist/)
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildConsole } from './build-console.js';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Written last: a directory holding it is a whole build, and may be replaced by the next. */
const BUILD_INFO = 'build-info.json';
/** Directories whose files other than code are read at run time (console pages, collector scripts). */
const SOURCE_DIRS = ['src', 'rest-compat'];
/** Compiled by tsc, or (the launchers) run from src/ itself: not copied. */
const CODE = /\.(ts|cjs)$/;
/** The console app's sources: built by Vite into build/console instead (tools/build-console.ts). */
const CONSOLE_APP = join('src', 'console', 'app');

function fail(message: string): never {
  console.error(`build: ${message}`);
  process.exit(1);
}

/** Files under `dir` (relative to the repository), recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** Never deletes a directory this script did not write, whatever --out-dir says. */
function clear(outDir: string): void {
  if (!existsSync(outDir)) return;
  if (readdirSync(outDir).length > 0 && !existsSync(join(outDir, BUILD_INFO))) fail(`${outDir} exists and is not a build: not replacing it`);
  rmSync(outDir, { recursive: true });
}

function compile(outDir: string): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', outDir], { stdio: 'inherit' });
  if (run.status !== 0) fail('tsc failed');
}

function copyAssets(outDir: string): string[] {
  const assets = SOURCE_DIRS.flatMap(filesUnder).filter((file) => !CODE.test(file) && !file.startsWith(CONSOLE_APP));
  for (const file of assets) cpSync(join(root, file), join(outDir, file));
  // The SQL migrations, applied at start (src/infra/migrate.ts).
  cpSync(join(root, 'prisma/migrations'), join(outDir, 'prisma/migrations'), { recursive: true });
  return [...assets, 'prisma/migrations/'];
}

const { values } = parseArgs({ options: { 'out-dir': { type: 'string', default: join(root, 'dist') } } });
const outDir = resolve(values['out-dir']!);
// Node finds the dependencies by walking up from each module: the build must sit inside the repository.
if (relative(root, dirname(outDir)).startsWith('..')) fail(`${outDir} is outside ${root}: the compiled code would not find node_modules`);
if (!existsSync(join(root, 'src/generated/prisma/client.ts')))
  fail('src/generated/ is missing: run npm ci (its postinstall generates the Prisma client and the typed operations)');
const started = Date.now();
clear(outDir);
compile(outDir);
const assets = copyAssets(outDir);
// Where src/console/console-build.cjs, compiled to dist/src/console, looks for it.
await buildConsole(join(outDir, 'build/console'));
writeFileSync(join(outDir, BUILD_INFO), `${JSON.stringify({ builtAt: new Date().toISOString(), assets }, null, 2)}\n`);
console.log(`build: ${relative(process.cwd(), outDir) || '.'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
