import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChdbEngine, INDEX_UNCOMPRESSED_CACHE_BYTES, UNCOMPRESSED_CACHE_BYTES } from './chdb-engine.js';
import { named } from './sql.js';
import { defineFlowStoreSuite } from './testkit/engine-suite.js';
import { threadStates } from './testkit/threads.js';

defineFlowStoreSuite('chDB (in-process)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'flowstore-chdb-'));
  const engine = new ChdbEngine(dir);
  return {
    engine,
    async close() {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('chDB session', () => {
  it('opens with caches for decompressed data and index blocks, which chDB leaves at 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowstore-chdb-'));
    const engine = new ChdbEngine(dir);
    try {
      const rows = await engine.query<{ name: string; value: string }>(
        named(
          'flowstore:test.caches',
          "SELECT name, value FROM system.server_settings WHERE name IN ('uncompressed_cache_size', 'index_uncompressed_cache_size') ORDER BY name",
        ),
        {},
      );
      expect(rows).toEqual([
        { name: 'index_uncompressed_cache_size', value: String(INDEX_UNCOMPRESSED_CACHE_BYTES) },
        { name: 'uncompressed_cache_size', value: String(UNCOMPRESSED_CACHE_BYTES) },
      ]);
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Linux honours a query's nice value only with CAP_SYS_NICE (root on our machines and CI).
const canRenice = process.platform === 'linux' && process.getuid?.() === 0;

describe('chDB query threads', () => {
  it.runIf(canRenice)('run at the lowest CPU priority, behind the API', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowstore-chdb-'));
    const engine = new ChdbEngine(dir);
    try {
      const busy = engine
        .query(named('flowstore:test.busy', 'SELECT count() FROM numbers(100000000000) WHERE sipHash64(number) = 0'), {}, { timeoutMs: 1500 })
        .catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect([...threadStates().values()].filter((t) => t.state === 'R').map((t) => t.nice)).toContain(19);
      await busy;
    } finally {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
