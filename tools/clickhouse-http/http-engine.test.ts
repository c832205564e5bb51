import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HttpEngine } from '../../src/flowstore/http-engine.js';
import { defineFlowStoreSuite } from '../../src/flowstore/testkit/engine-suite.js';
import { startClickHouseHttpServer, type ClickHouseHttpServer } from './server.js';

let server: ClickHouseHttpServer | undefined;

defineFlowStoreSuite('@clickhouse/client over HTTP (chDB-backed endpoint)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'flowstore-http-'));
  server = await startClickHouseHttpServer({ dataDir: dir, password: 'secret' });
  const engine = new HttpEngine({ url: server.url, username: 'default', password: 'secret' });
  return {
    engine,
    async close() {
      await engine.close();
      await server!.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('what went over the wire during the suite', () => {
  it('named every statement and never put a value into SQL text', () => {
    const log = server!.log;
    expect(log.length).toBeGreaterThan(50);
    for (const { query, queryId } of log) {
      expect(queryId).toMatch(/^flowstore:[a-z_.:-]+:[0-9a-f-]{36}$/);
      if (!query.startsWith('INSERT INTO flows')) expect(query).toMatch(/^\/\* [a-z][a-z0-9_.:-]* \*\/ /);
      // Values from the injection and round-trip tests appear only as parameters.
      expect(query).not.toMatch(/DROP TABLE flows|OR 1=1|10\.9\.9\.9|Google Drive/);
    }
  });
});
