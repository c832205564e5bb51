/**
 * How the service's process keeps the memory it has used (src/start.cjs applies it).
 *
 * A page fault is slow on some virtual machines: ~15 µs per 4 KB page on the Firecracker VMs we
 * run on (a Node buffer of 64 MB: 250 ms to first touch, 5 ms to copy into again). Both allocators
 * in the process give big blocks back to the kernel once freed, so each big result paid that
 * again: a 25,000-record page (63 MB, copied twice on its way out of chDB) took 1.1–1.6 s, of
 * which the engine's own work is ~0.1 s (docs/search.md, Results, session 13).
 * - glibc (Node, the chdb addon, libchdb's own copies): no mmap for big blocks, one arena, and up
 *   to 256 MB of freed memory kept at the top of the heap. Read when the process starts only.
 * - jemalloc inside libchdb (the engine's columns and buffers): freed pages kept 30 s before they
 *   go back. Read when libchdb loads, so setting it before loading chDB is in time.
 * A value the operator has set already wins (each glibc tunable, and JE_MALLOC_CONF as a whole).
 */
'use strict';

const GLIBC_MALLOC_TUNABLES = {
  'glibc.malloc.mmap_max': '0',
  'glibc.malloc.arena_max': '1',
  'glibc.malloc.trim_threshold': String(256 * 1024 * 1024),
};

const JEMALLOC_CONF = 'dirty_decay_ms:30000,muzzy_decay_ms:30000';

/** `GLIBC_TUNABLES` with ours added to those already set (`a=1:b=2`, as glibc reads them). */
function glibcTunables(current) {
  const set = new Set(
    (current ?? '')
      .split(':')
      .filter(Boolean)
      .map((entry) => entry.split('=')[0]),
  );
  const added = Object.entries(GLIBC_MALLOC_TUNABLES)
    .filter(([name]) => !set.has(name))
    .map(([name, value]) => `${name}=${value}`);
  return [current, ...added].filter(Boolean).join(':');
}

/** Whether this process runs on glibc, the only C library that reads GLIBC_TUNABLES. */
function onGlibc() {
  return process.platform === 'linux' && Boolean(process.report?.getReport().header.glibcVersionRuntime);
}

/**
 * The environment the service should run in, and whether this process must start again to run in
 * it (glibc reads its tunables only when a process starts).
 */
function memoryReuseEnvironment(env) {
  const wanted = { ...env, JE_MALLOC_CONF: env.JE_MALLOC_CONF ?? JEMALLOC_CONF };
  const tunables = glibcTunables(env.GLIBC_TUNABLES);
  // Asked only when a start would follow: the report behind onGlibc() takes ~7 ms, and the
  // started service, which has the tunables already, need not pay it again.
  if (tunables === env.GLIBC_TUNABLES || !onGlibc()) return { env: wanted, restart: false };
  return { env: { ...wanted, GLIBC_TUNABLES: tunables }, restart: true };
}

module.exports = { memoryReuseEnvironment };
