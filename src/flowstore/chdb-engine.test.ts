import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChdbEngine } from './chdb-engine.js';
import { defineFlowStoreSuite } from './testkit/engine-suite.js';

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
