import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxListener } from '../../src/infra/database.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../src/infra/embedded-postgres.js';
import { createLogger } from '../../src/infra/logger.js';
import { applyMigrations } from '../../src/infra/migrate.js';

/**
 * Several processes' connections (the server's pools, the admin CLI) share PGlite's one backend.
 * Their extended-protocol cycles and transactions must never interleave.
 */
describe('embedded PostgreSQL socket', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-pglite-'));
  let embedded: EmbeddedPostgres;
  const pools: pg.Pool[] = [];

  beforeAll(async () => {
    embedded = await startEmbeddedPostgres(dir);
    await embedded.pglite.exec('CREATE TABLE t (k int PRIMARY KEY, v text)');
    for (let i = 0; i < 3; i++) pools.push(new pg.Pool({ connectionString: embedded.url, max: 4 }));
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await embedded.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps concurrent parameterized statements and transactions of many connections apart', async () => {
    const failures: string[] = [];
    await Promise.all(
      pools.flatMap((pool, p) =>
        Array.from({ length: 300 }, async (_, i) => {
          try {
            if (i % 10 === 0) {
              const client = await pool.connect();
              try {
                await client.query('BEGIN');
                await client.query('INSERT INTO t VALUES ($1, $2)', [p * 100_000 + i, `v${p}-${i}`]);
                await client.query('SELECT pg_sleep(0.001)');
                await client.query('COMMIT');
              } finally {
                client.release();
              }
            }
            const { rows } = await pool.query('SELECT $1::int + $2::int AS s, $3::text AS t', [i, p, `p${p}-${i}`]);
            if (rows[0].s !== i + p || rows[0].t !== `p${p}-${i}`) failures.push(`wrong answer for ${p}/${i}`);
          } catch (error) {
            failures.push((error as Error).message);
          }
        }),
      ),
    );
    expect(failures).toEqual([]);
    expect((await embedded.pglite.query<{ n: number }>('SELECT count(*)::int AS n FROM t')).rows[0].n).toBe(90);
  });

  it('rolls back the open transaction of a connection that drops', async () => {
    const client = new pg.Client({ connectionString: embedded.url });
    await client.connect();
    await client.query('BEGIN');
    await client.query('INSERT INTO t VALUES (999999, $1)', ['dropped']);
    client.on('error', () => undefined);
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await expect.poll(async () => (await pools[0].query('SELECT count(*)::int AS n FROM t WHERE k = 999999')).rows[0].n).toBe(0);
  });

  it('polls the notification outbox only after other connections ran statements', async () => {
    await applyMigrations(pools[0], createLogger('silent'));
    let calls = 0;
    const run = embedded.pglite.execProtocolRawStream.bind(embedded.pglite);
    embedded.pglite.execProtocolRawStream = ((...args: Parameters<typeof run>) => {
      calls++;
      return run(...args);
    }) as typeof run;
    const listener = outboxListener(embedded.url, embedded.activity, createLogger('silent'), 10);
    try {
      const heard: string[] = [];
      await listener.listen('things', (payload) => heard.push(payload));
      await pools[1].query("SELECT app_notify('things', 'one')");
      await expect.poll(() => heard, { timeout: 5000 }).toEqual(['one']);
      // Idle: twenty ticks of the poller, and PGlite runs nothing.
      const before = calls;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(calls).toBe(before);
      // A notification inside a transaction is heard once it commits.
      const client = await pools[2].connect();
      await client.query('BEGIN');
      await client.query("SELECT app_notify('things', 'two')");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard).toEqual(['one']);
      await client.query('COMMIT');
      client.release();
      await expect.poll(() => heard, { timeout: 5000 }).toEqual(['one', 'two']);
    } finally {
      embedded.pglite.execProtocolRawStream = run;
      await listener.close();
    }
  });
});
