/**
 * Known flows for the search tests: a tree (MSP with children A and B), another tree, and ten
 * hand-written flows for A whose every filter, sort and page outcome the tests spell out.
 */
import { SignJWT } from 'jose';
import { expect } from 'vitest';
import type { App } from '../../app.js';
import { SIGNING_ALG } from '../../auth/keyring.js';
import { withLowS } from '../../auth/low-s.js';
import { TOKEN_ISSUER } from '../../auth/tokens.js';
import { insertFlowBatch } from '../../flowstore/index.js';
import { call } from '../../../test/kit/http.js';
import { seedTree } from '../../../test/kit/seed.js';

export const RECORDS = '/search/records/1.0';
export const AGG = '/search/agg/1.0';

/** One wall-clock minute `M`; A's flows sit at M+30 s − i s, so they share the minute bucket M. */
export function baseTimes() {
  const minute = Math.floor((Date.now() - 5 * 60_000) / 60_000) * 60_000;
  return { minute, base: minute + 30_000 };
}

/** A's flows by index: `i` is the record's position in @timestamp desc order. */
export function flowsOfA(base: number): Record<string, unknown>[] {
  const apps = ['HTTPS', 'DNS', 'HTTP', 'HTTPS', 'DNS', 'HTTP', 'HTTPS', 'DNS', 'Google Drive', undefined];
  const ports = [443, 53, 80, 443, 53, 80, 443, 53, 443, undefined];
  const bytes = [500, 100, 900, 200, 300, 700, 800, 400, 600, undefined];
  return apps.map((app, i) => {
    const flow: Record<string, unknown> = {
      '@timestamp': base - i * 1000,
      src: { ip: i === 8 ? '192.168.1.10' : `10.0.0.${i + 1}`, port: 40_000 + i },
      dst: { ip: i % 2 ? '8.8.8.8' : '1.1.1.1', ...(ports[i] === undefined ? {} : { port: ports[i] }) },
      transport: { proto: ports[i] === 53 ? 'UDP' : 'TCP' },
      meta: { tags: i % 4 === 0 ? ['scan'] : [] },
    };
    if (app !== undefined) flow.app_name = app;
    if (bytes[i] !== undefined) flow.stats = { volume: { bytes: { total: bytes[i] } } };
    return flow;
  });
}

export const INGEST_MS = 1_700_000_000_000;

/** A stored flow as search returns it whole: tenant and ingest time added, empty arrays dropped. */
export function asStored(flow: Record<string, unknown>, customerId: string): Record<string, unknown> {
  const copy = structuredClone(flow) as Record<string, any>;
  copy.meta = { ...copy.meta, customer_id: customerId, '@ingest_time': INGEST_MS };
  if (copy.meta.tags?.length === 0) delete copy.meta.tags;
  return copy;
}

export type Tree = Awaited<ReturnType<typeof seedTree>>;

export interface SearchWorld {
  tree: Tree;
  other: Tree;
  minute: number;
  base: number;
  a: Record<string, unknown>[];
  /** A flow of A outside the default 15-minute window (65 minutes before `base`). */
  oldOfA: Record<string, unknown>;
}

export async function seedSearchWorld(app: App): Promise<SearchWorld> {
  const tree = await seedTree(app);
  const other = await seedTree(app);
  const { minute, base } = baseTimes();
  const a = flowsOfA(base);
  const oldOfA = { '@timestamp': base - 65 * 60_000, app_name: 'OLD', dst: { port: 443 } };
  const put = (customerId: string, batchId: string, flows: Record<string, unknown>[]) =>
    insertFlowBatch(app.flows, { customerId, nodeId: 'node-1', batchId, flows, ingestTimeMs: INGEST_MS });
  await put(tree.childA.id, 'a', a);
  await put(tree.childA.id, 'a-old', [oldOfA]);
  await put(
    tree.childB.id,
    'b',
    [0, 1, 2].map((i) => ({ '@timestamp': base - i * 1000, app_name: 'B-APP', dst: { port: 443 } })),
  );
  await put(
    tree.msp.id,
    'msp',
    [0, 1].map((i) => ({ '@timestamp': base - i * 1000, app_name: 'MSP-APP', dst: { port: 443 } })),
  );
  await put(
    other.msp.id,
    'other',
    [0, 1].map((i) => ({ '@timestamp': base - i * 1000, app_name: 'OTHER-APP', dst: { port: 443 } })),
  );
  await put(other.childA.id, 'other-a', [{ '@timestamp': base, app_name: 'OTHER-A', dst: { port: 443 } }]);
  return { tree, other, minute, base, a, oldOfA };
}

export const iso = (ms: number) => new Date(ms).toISOString();

/** An absolute window around A's flows: [base − 20 s, base + 1 s]. */
export const windowOf = (base: number) => ({ start: { absolute: { date: iso(base - 20_000) } }, end: { absolute: { date: iso(base + 1000) } } });

export const search = (url: string, token: string | undefined, body: unknown, path = RECORDS) => call(url, 'POST', path, { token, body });

/** The nested error envelope of wire.md 2.2 B. */
export function nested(code: number, type: unknown, message: unknown, details?: Record<string, unknown>) {
  return {
    error: {
      code,
      type,
      message: message instanceof RegExp ? expect.stringMatching(message) : message,
      details: details ?? expect.any(Object),
    },
    timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
  };
}

/** A token signed by the server's key that expired a minute ago. */
export async function expiredToken(app: App, customerId: string, clientId: string): Promise<string> {
  const { kid, key } = app.services.keys.signingKey();
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ scopes: ['p.token.scope.search_api'], client_id: clientId })
    .setProtectedHeader({ alg: SIGNING_ALG, typ: 'JWT', kid })
    .setIssuer(TOKEN_ISSUER)
    .setAudience(customerId)
    .setSubject(clientId)
    .setIssuedAt(now - 3600)
    .setExpirationTime(now - 60)
    .sign(key);
  return withLowS(token);
}
