import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDatamodel } from '../../src/generated/pothos-prisma-types.js';
import { type Database, openDatabase } from '../../src/infra/database.js';
import { createLogger } from '../../src/infra/logger.js';
import { applyMigrations, readMigrations } from '../../src/infra/migrate.js';
import { createTestDatabase } from '../kit/databases.js';

describe('migrations', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Database;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await openDatabase({ databaseUrl: database.url, dataDir: '/nonexistent', logger: createLogger('silent'), role: 'server' });
  });
  afterAll(async () => {
    await db.close();
    await database.drop();
  });

  it('applied every migration once, and a second run applies nothing', async () => {
    const { rows } = await db.pool.query('SELECT name FROM _migrations ORDER BY name');
    expect(rows.map((r) => r.name)).toEqual(readMigrations().map((m) => m.name));
    expect(await applyMigrations(db.pool, createLogger('silent'))).toEqual([]);
  });

  it('refuses to start when an applied migration was edited', async () => {
    const edited = readMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'changed' } : m));
    await expect(applyMigrations(db.pool, createLogger('silent'), edited)).rejects.toThrow(/changed after it was applied/);
  });

  it('creates exactly the columns schema.prisma declares, for every model', async () => {
    const { models } = getDatamodel().datamodel;
    const { rows } = await db.pool.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    const tables = new Map<string, Set<string>>();
    for (const r of rows) tables.set(r.table_name, (tables.get(r.table_name) ?? new Set()).add(r.column_name));
    const prismaSchema = (await import('node:fs')).readFileSync(new URL('../../prisma/schema.prisma', import.meta.url), 'utf8');
    for (const [model, { fields }] of Object.entries(models)) {
      const block = new RegExp(`model ${model} \\{([\\s\\S]*?)\\n\\}`).exec(prismaSchema)![1];
      const table = /@@map\("([^"]+)"\)/.exec(block)![1];
      const expected = fields
        .filter((f) => f.kind !== 'object')
        .map((f) => new RegExp(`^\\s*${f.name}\\s.*@map\\("([^"]+)"\\)`, 'm').exec(block)?.[1] ?? f.name);
      expect([...(tables.get(table) ?? [])].sort(), `${model} → ${table}`).toEqual(expected.sort());
    }
  });

  it('round-trips every Prisma model', async () => {
    const { prisma } = db;
    const parent = await prisma.tenant.create({ data: { id: 'cus_rt_parent', type: 'msp', isMsp: true, name: 'P', handle: 'p', orgCode: 'org_x' } });
    const child = await prisma.tenant.create({ data: { id: 'cus_rt_child', type: 'child', parentId: parent.id, name: 'Ç', handle: 'c', subdomain: 's' } });
    expect(await prisma.tenant.findUniqueOrThrow({ where: { id: child.id }, include: { parent: true } })).toMatchObject({
      ...child,
      parent: { id: parent.id, isMsp: true, orgCode: 'org_x' },
    });
    const client = await prisma.apiClient.create({
      data: { id: 'cl_rt', customerId: child.id, secretHash: Buffer.from([1, 2, 3]), scopes: ['a', 'b'], description: 'd', revokedAt: new Date(0) },
    });
    const readBack = await prisma.apiClient.findUniqueOrThrow({ where: { id: client.id } });
    expect(Buffer.from(readBack.secretHash)).toEqual(Buffer.from([1, 2, 3]));
    expect(readBack).toMatchObject({ scopes: ['a', 'b'], description: 'd', kind: 'api', revokedAt: new Date(0) });
    const key = await prisma.signingKey.create({ data: { kid: 'k_rt', alg: 'ES256', privateJwk: { d: '1' }, publicJwk: { x: '2' } } });
    expect(await prisma.signingKey.findUniqueOrThrow({ where: { kid: key.kid } })).toEqual(key);
    await prisma.tenant.delete({ where: { id: parent.id } });
    expect(await prisma.apiClient.count({ where: { id: client.id } })).toBe(0);
  });

  it('tells LISTENers of this database when a client changes', async () => {
    const heard: string[] = [];
    await db.listen('auth_client_changed', (id) => heard.push(id));
    const tenant = await db.prisma.tenant.create({ data: { id: 'cus_n', type: 'customer' } });
    await db.prisma.apiClient.create({ data: { id: 'cl_n', customerId: tenant.id, secretHash: Buffer.alloc(32), scopes: [] } });
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    await other.query('UPDATE api_clients SET revoked_at = now() WHERE id = $1', ['cl_n']);
    await other.end();
    await expect.poll(() => heard).toContain('cl_n');
  });
});
