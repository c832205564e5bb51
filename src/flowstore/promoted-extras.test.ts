import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChdbEngine } from './chdb-engine.js';
import { insertFlowBatch } from './ingest.js';
import { EGRESS_ROLLUPS } from './egress-rollups.js';
import { MIGRATIONS, migrateFlowStore } from './schema.js';
import { searchRecords } from './search.js';
import { named } from './sql.js';

const PROMOTED = ['src_process_name', 'dst_process_name', 'tls_version', 'tls_sni', 'dns_rrname'];

describe('fields promoted out of extras, and whole records for rows stored before `source`', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flowstore-promoted-'));
  const engine = new ChdbEngine(dir);
  const ts = Date.now() - 60_000;

  beforeAll(async () => {
    await migrateFlowStore(engine);
    // The table as it was before the promotion (and the later migrations), with a flow that kept these fields in extras.
    for (const rollup of Object.values(EGRESS_ROLLUPS))
      await engine.command(named('flowstore:test.drop_projection', `ALTER TABLE flows DROP PROJECTION ${rollup.name}`));
    for (const index of ['idx_tls_sni', 'idx_dns_rrname']) await engine.command(named('flowstore:test.drop_index', `ALTER TABLE flows DROP INDEX ${index}`));
    for (const column of [...PROMOTED, 'source']) await engine.command(named('flowstore:test.drop_column', `ALTER TABLE flows DROP COLUMN ${column}`));
    await engine.command(named('flowstore:test.forget_migration', 'DELETE FROM schema_migrations WHERE version > 1'));
    const extras = {
      src: { process: { name: 'old.exe', pid: 1 } },
      tls: { version: 'TLS 1.2', sni: 'old.example' },
      dns: { rrname: 'q.example', rrtype: 'A' },
    };
    await engine.insertJsonEachRow('flows', [
      { customer_id: 'c-old', node_id: 'n', timestamp: ts, id: 'old-1', batch_id: 'b', extras: JSON.stringify(extras) },
    ]);
  });
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds the columns and indexes on migration, and older rows read them from extras', async () => {
    const report = await migrateFlowStore(engine);
    expect(report.addedColumns.sort()).toEqual([...PROMOTED, 'source'].sort());
    expect(report.applied).toEqual(MIGRATIONS.filter((m) => m.version > 1).map((m) => m.version));
    expect(report.addedIndexes.sort()).toEqual(['idx_dns_rrname', 'idx_tls_sni']);
    const rows = await engine.query(named('flowstore:test.promoted', `SELECT ${PROMOTED.join(', ')} FROM flows WHERE customer_id = 'c-old'`), {});
    expect(rows).toEqual([{ src_process_name: 'old.exe', dst_process_name: null, tls_version: 'TLS 1.2', tls_sni: 'old.example', dns_rrname: 'q.example' }]);
  });

  it('filters and returns them for old and new rows alike', async () => {
    await insertFlowBatch(engine, {
      customerId: 'c-old',
      nodeId: 'n',
      batchId: 'new',
      flows: [{ '@timestamp': ts, src: { ip: '10.0.0.1', process: { name: 'new.exe', pid: 2 } }, tls: { version: 'TLS 1.2', sni: 'new.example' } }],
    });
    const res = await searchRecords(engine, {
      customerIds: ['c-old'],
      sentence: 'tls.version eq TLS 1.2',
      sort: [{ field: 'tls.sni', order: 'asc' }],
      fields: ['tls', 'src.process'],
      start: { relative: { value: 1, unit: 'hours' } },
    });
    expect(res['c-old']!.flows).toEqual([
      { '@timestamp': ts, tls: { version: 'TLS 1.2', sni: 'new.example' }, src: { process: { name: 'new.exe', pid: 2 } } },
      { '@timestamp': ts, tls: { version: 'TLS 1.2', sni: 'old.example' }, src: { process: { name: 'old.exe', pid: 1 } } },
    ]);
  });
});
