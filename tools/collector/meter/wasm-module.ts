// The meter's WebAssembly module, built from the AssemblyScript in ./wasm/ by the compiler in the
// dev dependencies. The build is kept under wasm/build/, named by a digest of the sources, so a
// changed source is never run as an older build: npm's postinstall builds it, and a process that
// finds no build of the sources it has builds one (a few seconds, once) before it meters.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCES = fileURLToPath(new URL('./wasm/', import.meta.url));
const ENTRY = 'meter-core.ts';
const BUILDS = join(SOURCES, 'build');
const PREFIX = 'meter-core.';

let compiled: WebAssembly.Module | undefined;

/** The compiled module, built first when the sources have no build yet. */
export function meterWasmModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(readFileSync(ensureMeterWasm()));
  return compiled;
}

/** The path of the build of the current sources, built now when missing. */
export function ensureMeterWasm(): string {
  const path = join(BUILDS, `${PREFIX}${sourceDigest()}.wasm`);
  if (!existsSync(path)) build(path);
  return path;
}

function sourceDigest(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(SOURCES)
    .filter((file) => file.endsWith('.ts') || file === 'tsconfig.json')
    .sort()) {
    hash
      .update(name)
      .update('\0')
      .update(readFileSync(join(SOURCES, name)))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function build(path: string): void {
  const asc = compilerPath();
  mkdirSync(BUILDS, { recursive: true });
  // Written aside and renamed: processes building at once each leave a whole file.
  const partial = `${path}.${process.pid}.partial`;
  try {
    execFileSync(process.execPath, [asc, join(SOURCES, ENTRY), '-O3', '--runtime', 'stub', '--outFile', partial], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    rmSync(partial, { force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`building the meter's WebAssembly (${ENTRY}) failed${stderr ? `:\n${stderr}` : ''}`);
  }
  renameSync(partial, path);
  for (const old of readdirSync(BUILDS))
    if (old.startsWith(PREFIX) && old !== basename(path) && !old.endsWith('.partial')) rmSync(join(BUILDS, old), { force: true });
}

function compilerPath(): string {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('assemblyscript/package.json')), 'bin', 'asc.js');
  } catch {
    throw new Error(`the meter's WebAssembly is not built (${BUILDS}) and its compiler, AssemblyScript, is not installed: run npm ci`);
  }
}
