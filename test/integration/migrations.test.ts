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
    const key = await prisma.signingKey.create({ data: { kid: 'k_rt', alg: 'ES256', privateBox: Buffer.from([7, 8]), publicJwk: { x: '2' } } });
    expect(await prisma.signingKey.findUniqueOrThrow({ where: { kid: key.kid } })).toMatchObject({ ...key, privateBox: expect.anything() });
    await prisma.signingKey.create({ data: { kid: 'k_legacy', alg: 'ES256', legacyPrivateJwk: { d: '1' }, publicJwk: { x: '2' } } });
    // A row keeps its private key in one form or the other, never in none.
    await expect(prisma.signingKey.create({ data: { kid: 'k_none', alg: 'ES256', publicJwk: { x: '2' } } })).rejects.toThrow();
    const profile = await prisma.profile.create({
      data: {
        id: 'prf_rt',
        customerId: child.id,
        name: 'P',
        description: 'd',
        services: { packet: { enabled: true } },
        tags: ['a'],
        updateChannel: 'dev',
        autoUpdate: false,
        fleetStaging: true,
      },
    });
    expect(await prisma.profile.findUniqueOrThrow({ where: { id: profile.id } })).toEqual(profile);
    const node = await prisma.node.create({
      data: {
        id: 'node_rt',
        customerId: child.id,
        machineId: 'm',
        hostname: 'h',
        description: 'd',
        kind: 'managed',
        status: 'active',
        profileId: profile.id,
        clientId: client.id,
        collectorVersion: '1.2.3',
        updateChannel: 'stable',
        os: 'linux',
        arch: 'amd64',
        localIp: '10.0.0.1',
        publicIp: '1.2.3.4',
        hardware: { cpus: 4 },
        reportedServices: { packet: {} },
        lastSeenAt: new Date(1),
        controlConnectedAt: new Date(2),
        controlDisconnectedAt: new Date(3),
        ingestSeenAt: new Date(4),
      },
    });
    expect(await prisma.node.findUniqueOrThrow({ where: { id: node.id } })).toEqual(node);
    const enrolment = await prisma.enrolmentCredential.create({
      data: {
        clientId: client.id,
        customerId: child.id,
        kind: 'provision',
        machineId: 'm',
        profileId: profile.id,
        description: 'SN',
        nodeId: node.id,
        enrolledAt: new Date(5),
      },
    });
    expect(await prisma.enrolmentCredential.findUniqueOrThrow({ where: { clientId: client.id } })).toEqual(enrolment);
    const device = await prisma.deviceAuthorization.create({
      data: {
        id: 'dev_rt',
        codeHash: Buffer.from([9]),
        hostname: 'h',
        machineId: 'm',
        nodeId: 'n',
        status: 'approved',
        customerId: child.id,
        decidedBy: client.id,
        keyClientId: client.id,
        keyDeliveredAt: new Date(6),
        lastPolledAt: new Date(7),
        decidedAt: new Date(8),
        expiresAt: new Date(9),
      },
    });
    expect(await prisma.deviceAuthorization.findUniqueOrThrow({ where: { id: device.id } })).toMatchObject({ ...device, codeHash: expect.anything() });
    const release = await prisma.collectorRelease.create({
      data: {
        id: 'rel_rt',
        version: '1.0.0',
        channel: 'stable',
        os: 'linux',
        arch: 'amd64',
        sha256: 'ab',
        size: 3,
        filename: 'f.tar.gz',
        asset: { create: { content: Buffer.from([1, 2, 3]) } },
      },
    });
    const readRelease = await prisma.collectorRelease.findUniqueOrThrow({ where: { id: release.id }, include: { asset: true } });
    expect(Buffer.from(readRelease.asset!.content)).toEqual(Buffer.from([1, 2, 3]));

    const event = await prisma.event.create({
      data: {
        id: 'evt_rt',
        customerId: child.id,
        topic: 'node_lifecycle',
        kind: 'node_connected',
        subject: node.id,
        data: { node_id: node.id },
        createdAt: new Date(10),
      },
    });
    expect(await prisma.event.findUniqueOrThrow({ where: { id: event.id } })).toEqual(event);
    const rule = await prisma.automationRule.create({
      data: {
        id: 'rule_rt',
        customerId: parent.id,
        name: 'R',
        enabled: false,
        topic: 'node_lifecycle',
        kinds: ['node_connected'],
        conditions: [{ field: 'node_id', op: 'exists', value: true }],
        action: 'webhook',
        webhookUrl: 'https://example.com/h',
        legacySecretKid: key.kid,
        secretBox: Buffer.from([4, 5, 6]),
        createdBy: client.id,
      },
    });
    const readRule = await prisma.automationRule.findUniqueOrThrow({ where: { id: rule.id } });
    expect(Buffer.from(readRule.secretBox!)).toEqual(Buffer.from([4, 5, 6]));
    expect(readRule).toMatchObject({ ...rule, secretBox: expect.anything() });
    const run = await prisma.automationRun.create({
      data: {
        id: 'run_rt',
        ruleId: rule.id,
        customerId: parent.id,
        eventId: event.id,
        status: 'retrying',
        attempts: 2,
        dueAt: new Date(11),
        leaseUntil: new Date(12),
        responseCode: 503,
        lastError: 'e',
        result: { response_excerpt: 'x' },
        attemptLog: [{ attempt: 1 }],
        finishedAt: new Date(13),
      },
    });
    expect(await prisma.automationRun.findUniqueOrThrow({ where: { id: run.id } })).toEqual(run);
    await expect(prisma.automationRun.create({ data: { id: 'run_rt2', ruleId: rule.id, customerId: parent.id, eventId: event.id } })).rejects.toThrow();
    await prisma.event.delete({ where: { id: event.id } });
    expect(await prisma.automationRun.count({ where: { id: run.id } })).toBe(0);
    await prisma.event.create({ data: { id: 'evt_rt2', customerId: child.id, topic: 'detections', kind: 'detection_run_completed' } });
    expect((await prisma.event.findUniqueOrThrow({ where: { id: 'evt_rt2' } })).data).toEqual({});

    const investigation = await prisma.investigation.create({
      data: {
        id: 'inv_rt',
        customerId: child.id,
        detector: 'beacon',
        subject: '10.0.0.1|Org',
        fingerprint: 'fp',
        status: 'completed',
        disposition: 'malicious',
        confidence: 0.875,
        severity: 90,
        headline: 'h',
        source: '10.0.0.1',
        destination: 'Org',
        tags: ['beacon'],
        relatedAlertsCount: 3,
        nodeIds: [node.id],
        evidence: { measures: { sessions: 12 } },
        analysis: { verdict: { disposition: 'malicious' } },
        firstActivityAt: new Date(14),
        lastActivityAt: new Date(15),
        detectedAt: new Date(16),
        closedAt: new Date(17),
        completedAt: new Date(18),
      },
    });
    expect(await prisma.investigation.findUniqueOrThrow({ where: { id: investigation.id } })).toEqual(investigation);
    const bare = await prisma.investigation.create({
      data: {
        id: 'inv_rt2',
        customerId: child.id,
        detector: 'scan',
        subject: 's',
        fingerprint: 'fp2',
        firstActivityAt: new Date(1),
        lastActivityAt: new Date(2),
        detectedAt: new Date(3),
      },
    });
    expect(bare).toMatchObject({
      status: 'running',
      disposition: null,
      confidence: null,
      severity: 0,
      tags: [],
      relatedAlertsCount: 0,
      nodeIds: [],
      evidence: {},
      analysis: null,
      closedAt: null,
    });
    // One investigation per (tenant, fingerprint).
    await expect(
      prisma.investigation.create({
        data: {
          id: 'inv_rt3',
          customerId: child.id,
          detector: 'scan',
          subject: 's',
          fingerprint: 'fp2',
          firstActivityAt: new Date(1),
          lastActivityAt: new Date(2),
          detectedAt: new Date(3),
        },
      }),
    ).rejects.toThrow();
    const detectionRun = await prisma.detectionRun.create({
      data: {
        id: 'drun_rt',
        customerId: parent.id,
        trigger: 'manual',
        status: 'completed',
        tenantIds: [parent.id, child.id],
        windowStart: new Date(19),
        windowEnd: new Date(20),
        result: { opened: [] },
        error: 'e',
        claimedBy: 'host:1',
        requestedAt: new Date(21),
        startedAt: new Date(22),
        finishedAt: new Date(23),
      },
    });
    expect(await prisma.detectionRun.findUniqueOrThrow({ where: { id: detectionRun.id } })).toEqual(detectionRun);

    await prisma.profile.delete({ where: { id: profile.id } });
    expect((await prisma.node.findUniqueOrThrow({ where: { id: node.id } })).profileId).toBeNull();
    await prisma.tenant.delete({ where: { id: parent.id } });
    expect(await prisma.apiClient.count({ where: { id: client.id } })).toBe(0);
    expect(await prisma.node.count({ where: { id: node.id } })).toBe(0);
    expect(await prisma.deviceAuthorization.count({ where: { id: device.id } })).toBe(0);
    expect(await prisma.event.count({ where: { id: 'evt_rt2' } })).toBe(0);
    expect(await prisma.automationRule.count({ where: { id: rule.id } })).toBe(0);
    expect(await prisma.investigation.count({ where: { customerId: child.id } })).toBe(0);
    expect(await prisma.detectionRun.count({ where: { id: detectionRun.id } })).toBe(0);
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
