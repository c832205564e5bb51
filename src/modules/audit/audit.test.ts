import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { seedPerson } from '../../../test/kit/people.js';
import { type Caller, seedCaller, seedTenant, seedTree } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';
import { createLogger } from '../../infra/logger.js';
import { auditEntriesDropped } from '../../infra/metrics.js';
import type { AuditEntry } from './audit-entry.js';
import { ANONYMOUS_PER_CLIENT_PER_MINUTE } from './anonymous-allowance.js';
import { AuditStore } from './audit.store.js';
import { AuditWriter } from './audit-writer.js';

const createProfile = `mutation($input: CreateProfileInput!) { createProfile(input: $input) { profile { profileId } } }`;
const auditLog = `query($customerId: String!, $filter: AuditLogFilter, $first: Int, $after: String) {
  auditLog(customerId: $customerId, filter: $filter, first: $first, after: $after) {
    pageInfo { hasNextPage endCursor }
    edges { cursor node { entryId customerId at actor { kind id } action field target result requestId clientAddress userAgent } } } }`;

describe('the audit log', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let store: AuditStore;

  /** Every row a request left, once what is queued has been written. */
  const entriesOf = async (requestId: string) => {
    await t.app.services.audit.flush();
    return t.app.db.prisma.auditEntry.findMany({ where: { requestId }, orderBy: { id: 'asc' } });
  };
  const readLog = async (token: string, variables: Record<string, unknown>) => {
    await t.app.services.audit.flush();
    return graphql(t.url, auditLog, variables, token);
  };

  beforeAll(async () => {
    t = await startTestApp({ env: { AUDIT_RETENTION_DAYS: '2', PURGE_INTERVAL_SECONDS: '0' } });
    tree = await seedTree(t.app);
    store = new AuditStore(t.app.db.prisma, t.app.db.pool);
  });
  afterAll(() => t.stop());

  it('records a REST write once: actor, tenant named, action, target, result, request id, address and user agent', async () => {
    const res = await call(t.url, 'POST', '/rest/profiles/1.0', {
      token: tree.mspCaller.token,
      body: { name: 'Audited', customer_id: tree.childA.id, services: {} },
      headers: { 'user-agent': 'audit-test/1.0', 'x-request-id': 'audit-rest-1' },
    });
    expect(res.status).toBe(201);
    const entries = await entriesOf('audit-rest-1');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      customerId: tree.childA.id,
      actorKind: 'client',
      actorId: tree.mspCaller.clientId,
      action: 'profiles.create',
      field: 'createProfile',
      target: { 'input.customerId': tree.childA.id, 'input.name': 'Audited' },
      result: 'ok',
      clientAddress: '127.0.0.1',
      userAgent: 'audit-test/1.0',
    });
  });

  it('records a /graphql mutation once, and a refused one with its error code under the caller’s own tenant', async () => {
    const created = await call(t.url, 'POST', '/graphql', {
      token: tree.childACaller.token,
      body: { query: createProfile, variables: { input: { name: 'Mine' } } },
      headers: { 'x-request-id': 'audit-gql-ok' },
    });
    const profileId = created.body.data.createProfile.profile.profileId;
    const removed = await call(t.url, 'POST', '/graphql', {
      token: tree.childACaller.token,
      body: { query: 'mutation($id: String!) { deleteProfile(profileId: $id) { deleted { profileId } } }', variables: { id: profileId } },
      headers: { 'x-request-id': 'audit-gql-delete' },
    });
    expect(removed.body.errors).toBeUndefined();
    expect(await entriesOf('audit-gql-ok')).toMatchObject([{ action: 'profiles.create', result: 'ok', customerId: tree.childA.id }]);
    expect(await entriesOf('audit-gql-delete')).toMatchObject([{ action: 'profiles.delete', field: 'deleteProfile', target: { profileId }, result: 'ok' }]);

    // No node_api: refused 403, filed under the caller's own tenant, not the one it named.
    const scopeless = await seedCaller(t.app, tree.childB.id, [Scopes.searchApi]);
    const refused = await call(t.url, 'POST', '/graphql', {
      token: scopeless.token,
      body: { query: createProfile, variables: { input: { name: 'No', customerId: tree.childA.id } } },
      headers: { 'x-request-id': 'audit-gql-refused' },
    });
    expect(refused.body.errors[0].extensions.code).toBe('authorization_error');
    expect(await entriesOf('audit-gql-refused')).toMatchObject([
      { action: 'profiles.create', result: 'authorization_error', customerId: tree.childB.id, actorId: scopeless.clientId },
    ]);
  });

  it('records each field of a document with several mutations, and none of those a failure kept from running', async () => {
    const two = `mutation($c: String!) { a: createProfile(input: { name: "A", customerId: $c }) { profile { profileId } }
      b: createProfile(input: { name: "B" }) { profile { profileId } } }`;
    const both = await call(t.url, 'POST', '/graphql', {
      token: tree.mspCaller.token,
      body: { query: two, variables: { c: tree.childB.id } },
      headers: { 'x-request-id': 'audit-two' },
    });
    expect(both.body.errors).toBeUndefined();
    expect((await entriesOf('audit-two')).map((e) => [e.customerId, e.target])).toEqual([
      [tree.childB.id, { 'input.name': 'A', 'input.customerId': tree.childB.id }],
      [tree.msp.id, { 'input.name': 'B' }],
    ]);
    const firstFails = await call(t.url, 'POST', '/graphql', {
      token: tree.mspCaller.token,
      body: { query: two, variables: { c: 'cus_elsewhere' } },
      headers: { 'x-request-id': 'audit-two-failed' },
    });
    expect(firstFails.body.errors[0].extensions.code).toBe('unauthorized');
    expect(await entriesOf('audit-two-failed')).toMatchObject([{ field: 'createProfile', result: 'unauthorized', customerId: tree.msp.id }]);
  });

  it('stores a lone surrogate in an argument without failing the batch it shares', async () => {
    // The profile refuses the name; its entry keeps it, as text PostgreSQL's jsonb takes.
    const odd = await call(t.url, 'POST', '/graphql', {
      token: tree.childACaller.token,
      rawBody: JSON.stringify({ query: createProfile, variables: { input: { name: 'odd' } } }).replace('"odd"', '"odd\\ud800"'),
      headers: { 'x-request-id': 'audit-odd' },
    });
    expect(odd.body.errors[0].extensions.code).toBe('invalid_request');
    const neighbour = await call(t.url, 'POST', '/graphql', {
      token: tree.childACaller.token,
      body: { query: createProfile, variables: { input: { name: 'neighbour' } } },
      headers: { 'x-request-id': 'audit-odd-neighbour' },
    });
    expect(neighbour.body.errors).toBeUndefined();
    expect(await entriesOf('audit-odd')).toMatchObject([{ target: { 'input.name': 'odd\ufffd' }, result: 'invalid_request' }]);
    expect(await entriesOf('audit-odd-neighbour')).toMatchObject([{ result: 'ok' }]);
  });

  it('files an action of `own` reach under the caller, even when it names a child (deleting it)', async () => {
    const child = await seedTenant(t.app, { parentId: tree.msp.id });
    const deleted = await call(t.url, 'POST', '/graphql', {
      token: tree.mspCaller.token,
      body: {
        query: 'mutation($c: String!, $p: String!) { deleteDeployment(input: { customerId: $c, parentId: $p }) { __typename } }',
        variables: { c: child.id, p: tree.msp.id },
      },
      headers: { 'x-request-id': 'audit-delete-child' },
    });
    expect(deleted.body.errors).toBeUndefined();
    expect(await entriesOf('audit-delete-child')).toMatchObject([
      { customerId: tree.msp.id, action: 'deployments.delete', target: { 'input.customerId': child.id, 'input.parentId': tree.msp.id }, result: 'ok' },
    ]);
  });

  it('records a mutation over graphql-ws once', async () => {
    const client: Client = createClient({
      url: t.url.replace(/^http/, 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${tree.childBCaller.token}` },
    });
    try {
      const result = await new Promise<any>((resolve, reject) =>
        client.subscribe({ query: createProfile, variables: { input: { name: 'Over ws' } } }, { next: resolve, error: reject, complete: () => undefined }),
      );
      expect(result.errors).toBeUndefined();
    } finally {
      await client.dispose();
    }
    await t.app.services.audit.flush();
    const entries = await t.app.db.prisma.auditEntry.findMany({ where: { actorId: tree.childBCaller.clientId, action: 'profiles.create' } });
    expect(entries).toHaveLength(1);
    expect(entries[0]!.target).toEqual({ 'input.name': 'Over ws' });
  });

  it('never stores a secret; records a refused token request for a real client, never anonymous floods', async () => {
    const secret = 'not-the-secret-0123456789abcdef';
    const before = await t.app.db.prisma.auditEntry.count();
    const refused = await call(t.url, 'POST', '/rest/oauth2/token/1.0', {
      body: { client_id: tree.childACaller.clientId, client_secret: secret },
      headers: { 'x-request-id': 'audit-token-refused' },
    });
    expect(refused.status).toBe(401);
    expect(await entriesOf('audit-token-refused')).toMatchObject([
      { customerId: tree.childA.id, actorKind: 'anonymous', actorId: '', action: 'public', field: 'issueToken', result: 'invalid_credentials' },
    ]);
    const issued = await graphql(t.url, 'mutation($id: String!, $s: String!) { issueToken(clientId: $id, clientSecret: $s) { accessToken } }', {
      id: tree.childACaller.clientId,
      s: tree.childACaller.clientSecret,
    });
    expect(issued.errors).toBeUndefined();
    // Anonymous calls naming no real client, and device starts, leave nothing; a flood naming a
    // real one leaves ANONYMOUS_PER_CLIENT_PER_MINUTE entries a minute.
    for (let i = 0; i < 20; i += 1) {
      await call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: `nobody_${i}`, client_secret: secret } });
    }
    await call(t.url, 'POST', '/rest/oauth2/device/1.0', { body: { hostname: 'h' } });
    await t.app.services.audit.flush();
    expect(await t.app.db.prisma.auditEntry.count()).toBe(before + 1);
    for (let i = 0; i < ANONYMOUS_PER_CLIENT_PER_MINUTE + 5; i += 1) {
      await call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: tree.childBCaller.clientId, client_secret: secret } });
    }
    await t.app.services.audit.flush();
    expect(await t.app.db.prisma.auditEntry.count({ where: { customerId: tree.childB.id, actorKind: 'anonymous' } })).toBe(ANONYMOUS_PER_CLIENT_PER_MINUTE);
    const { rows } = await t.app.db.pool.query<{ row: string }>('SELECT audit_log::text AS row FROM audit_log');
    const text = rows.map((r) => r.row).join('\n');
    for (const leaked of [secret, tree.childACaller.clientSecret, ...Object.values(tree).flatMap((v) => ('token' in v ? [(v as Caller).token] : []))]) {
      expect(text).not.toContain(leaked);
    }
  });

  describe('reading', () => {
    let tenant: string;
    const t0 = Date.parse('2026-11-20T10:00:00.000Z');
    const entry = (minutes: number, over: Partial<AuditEntry> = {}): AuditEntry => ({
      customerId: tenant,
      at: new Date(t0 + minutes * 60_000),
      actor: { kind: 'client', id: 'cli_a' },
      action: 'profiles.create',
      field: 'createProfile',
      target: {},
      result: 'ok',
      requestId: `r${minutes}`,
      clientAddress: null,
      userAgent: null,
      ...over,
    });

    beforeAll(async () => {
      tenant = (await seedTenant(t.app, { parentId: tree.msp.id })).id;
      await store.insert([
        ...Array.from({ length: 7 }, (_, i) => entry(i)),
        entry(10, { actor: { kind: 'user', id: 'usr_1' }, action: 'networks.write', field: 'addOwnNetworks' }),
        entry(11, { result: 'authorization_error' }),
        entry(12, { result: 'not_found', action: 'profiles.delete', field: 'deleteProfile' }),
      ]);
    });

    it('filters by actor, action, result and time', async () => {
      const ids = async (filter: Record<string, unknown>) => {
        const res = await readLog(tree.mspCaller.token, { customerId: tenant, filter });
        expect(res.errors).toBeUndefined();
        return res.data.auditLog.edges.map((e: any) => e.node.requestId);
      };
      expect(await ids({ actorKind: 'USER' })).toEqual(['r10']);
      expect(await ids({ actorId: 'usr_1' })).toEqual(['r10']);
      expect(await ids({ action: 'profiles.delete' })).toEqual(['r12']);
      expect(await ids({ result: 'error' })).toEqual(['r12', 'r11']);
      expect(await ids({ result: 'authorization_error' })).toEqual(['r11']);
      expect(await ids({ from: new Date(t0 + 5 * 60_000).toISOString(), to: new Date(t0 + 11 * 60_000).toISOString() })).toEqual(['r10', 'r6', 'r5']);
      expect((await ids({ result: 'ok' })).length).toBe(8);
      const bad = await readLog(tree.mspCaller.token, { customerId: tenant, filter: { from: '2026-11-21T00:00:00Z', to: '2026-11-20T00:00:00Z' } });
      expect(bad.errors?.[0]?.extensions?.code).toBe('invalid_request');
      const ancient = await readLog(tree.mspCaller.token, { customerId: tenant, filter: { from: '0000-01-01T00:00:00Z' } });
      expect(ancient.errors?.[0]?.extensions?.code).toBe('invalid_request');
    });

    it('pages newest first by cursor, and refuses a cursor it did not hand out', async () => {
      const seen: string[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 10; pages += 1) {
        const res: any = await readLog(tree.mspCaller.token, { customerId: tenant, first: 3, after });
        seen.push(...res.data.auditLog.edges.map((e: any) => e.node.requestId));
        if (!res.data.auditLog.pageInfo.hasNextPage) break;
        after = res.data.auditLog.pageInfo.endCursor;
      }
      expect(seen).toEqual(['r12', 'r11', 'r10', 'r6', 'r5', 'r4', 'r3', 'r2', 'r1', 'r0']);
      const forged = await readLog(tree.mspCaller.token, { customerId: tenant, after: Buffer.from('profile:x').toString('base64') });
      expect(forged.errors?.[0]?.extensions?.code).toBe('invalid_request');
      const backward = await graphql(
        t.url,
        'query($c: String!) { auditLog(customerId: $c, last: 2) { edges { cursor } } }',
        { c: tenant },
        tree.mspCaller.token,
      );
      expect(backward.errors?.[0]?.extensions?.code).toBe('invalid_request');
    });

    it('names the actors: a person by their name, a client by its description; only those of the reader’s tree', async () => {
      const mspPerson = await seedPerson(t.app, tree.msp.id, 'admin');
      await t.app.db.prisma.user.update({ where: { id: mspPerson.userId }, data: { name: 'Morgan Msp' } });
      const childPerson = await seedPerson(t.app, tree.childA.id, 'admin');
      await t.app.db.prisma.apiClient.update({ where: { id: tree.childACaller.clientId }, data: { description: 'child sync job' } });
      const at = (minutes: number, actor: AuditEntry['actor']) => ({ ...entry(minutes, { actor }), customerId: tree.childA.id, requestId: `named${minutes}` });
      await store.insert([
        at(20, { kind: 'user', id: mspPerson.userId }),
        at(21, { kind: 'user', id: childPerson.userId }),
        at(22, { kind: 'client', id: tree.childACaller.clientId }),
        at(23, { kind: 'anonymous', id: '' }),
        at(24, { kind: 'user', id: 'usr_gone' }),
      ]);
      const NAMES = `query($c: String!, $f: DateTime!, $t: DateTime!) { auditLog(customerId: $c, filter: { from: $f, to: $t }) { edges { node { requestId actor { kind name } } } } }`;
      const names = async (token: string) => {
        const res = await graphql(
          t.url,
          NAMES,
          { c: tree.childA.id, f: new Date(t0 + 20 * 60_000).toISOString(), t: new Date(t0 + 30 * 60_000).toISOString() },
          token,
        );
        expect(res.errors).toBeUndefined();
        return Object.fromEntries(res.data.auditLog.edges.map((e: any) => [e.node.requestId, e.node.actor.name]));
      };
      const childLocal = childPerson.email.split('@')[0];
      expect(await names(tree.mspCaller.token)).toEqual({
        named24: null,
        named23: null,
        named22: 'child sync job',
        named21: childLocal,
        named20: 'Morgan Msp',
      });
      // The child reads its own log, but the MSP's people are not its to name.
      expect((await names(tree.childACaller.token)).named20).toBeNull();
    });

    it('shows a tenant its own entries and an MSP its children’s, and nothing outside the tree', async () => {
      const own = await readLog(tree.childACaller.token, { customerId: tree.childA.id });
      expect(own.data.auditLog.edges.length).toBeGreaterThan(0);
      expect(own.data.auditLog.edges.every((e: any) => e.node.customerId === tree.childA.id)).toBe(true);
      const fromMsp = await readLog(tree.mspCaller.token, { customerId: tree.childA.id });
      expect(fromMsp.data.auditLog.edges.map((e: any) => e.node.entryId)).toEqual(own.data.auditLog.edges.map((e: any) => e.node.entryId));
      for (const [token, customerId] of [
        [tree.childBCaller.token, tree.childA.id],
        [tree.childACaller.token, tree.msp.id],
        [tree.childACaller.token, tenant],
      ] as const) {
        const res = await readLog(token, { customerId });
        expect(res.errors?.[0]?.extensions?.code, customerId).toBe('not_found');
      }
      const noScope = await seedCaller(t.app, tree.msp.id, [Scopes.searchApi]);
      expect((await readLog(noScope.token, { customerId: tree.msp.id })).errors?.[0]?.extensions?.code).toBe('authorization_error');
    });
  });

  it('removes entries past the retention in the purge job', async () => {
    const tenant = (await seedTenant(t.app)).id;
    const at = (days: number) => new Date(Date.now() - days * 86_400_000);
    const base = {
      customerId: tenant,
      actor: { kind: 'client', id: 'c' },
      action: 'a.b',
      field: 'f',
      target: {},
      result: 'ok',
      clientAddress: null,
      userAgent: null,
    } as const;
    await store.insert([
      { ...base, at: at(3), requestId: 'old' },
      { ...base, at: at(1), requestId: 'recent' },
    ]);
    await t.app.services.purge.trigger();
    const left = await t.app.db.prisma.auditEntry.findMany({ where: { customerId: tenant } });
    expect(left.map((e) => e.requestId)).toEqual(['recent']);
  });
});

describe('the audit writer', () => {
  let t: TestApp;
  let store: AuditStore;
  let tenant: string;
  beforeAll(async () => {
    t = await startTestApp();
    store = new AuditStore(t.app.db.prisma, t.app.db.pool);
    tenant = (await seedTenant(t.app)).id;
  });
  afterAll(() => t.stop());

  const dropped = async (reason: string) => (await auditEntriesDropped.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
  const entry = (requestId: string, customerId = tenant): AuditEntry => ({
    customerId,
    at: new Date(),
    actor: { kind: 'client', id: 'c' },
    action: 'profiles.create',
    field: 'createProfile',
    target: {},
    result: 'ok',
    requestId,
    clientAddress: null,
    userAgent: null,
  });

  it('holds at most its capacity, counts what it drops, warns once until the queue drains, and writes the rest when stopped', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', {}, (line) => lines.push(line));
    const writer = new AuditWriter((e) => store.insert(e), logger, { capacity: 3, batchSize: 10, flushMs: 60_000 });
    const before = await dropped('queue_full');
    writer.record(['q1', 'q2'].map((id) => entry(id)));
    writer.record(['q3', 'q4', 'q5'].map((id) => entry(id)));
    writer.record([entry('q6')]);
    expect(writer.pending).toBe(3);
    expect((await dropped('queue_full')) - before).toBe(3);
    expect(lines.filter((l) => l.includes('audit.queue_full'))).toHaveLength(1);
    await writer.flush();
    expect(writer.pending).toBe(0);
    const written = await t.app.db.prisma.auditEntry.findMany({ where: { customerId: tenant, requestId: { startsWith: 'q' } }, orderBy: { id: 'asc' } });
    expect(written.map((e) => e.requestId)).toEqual(['q1', 'q2', 'q3']);
    writer.record(['q7', 'q8', 'q9', 'q10'].map((id) => entry(id)));
    expect(lines.filter((l) => l.includes('audit.queue_full'))).toHaveLength(2);
    // Stopping (the server's shutdown) writes what is still queued.
    await writer.stop();
    expect(await t.app.db.prisma.auditEntry.count({ where: { customerId: tenant, requestId: { in: ['q7', 'q8', 'q9', 'q10'] } } })).toBe(3);
  });

  it('writes a full batch without waiting for the timer, skips entries of a vanished tenant, and counts a failed write', async () => {
    const lines: string[] = [];
    const writer = new AuditWriter(
      (e) => store.insert(e),
      createLogger('info', {}, (line) => lines.push(line)),
      { capacity: 100, batchSize: 2, flushMs: 60_000 },
    );
    writer.record([entry('b1'), entry('b2', 'cus_gone')]);
    await vi.waitFor(async () => expect(await t.app.db.prisma.auditEntry.count({ where: { requestId: { in: ['b1', 'b2'] } } })).toBe(1));
    const before = await dropped('write_failed');
    writer.record([entry('nul\u0000')]);
    await writer.stop();
    expect((await dropped('write_failed')) - before).toBe(1);
    expect(lines.some((l) => l.includes('audit.write_failed'))).toBe(true);
  });
});
