import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminCli } from '../kit/admin-cli.js';
import { startTestApp } from '../kit/app.js';
import { call } from '../kit/http.js';
import { insertFlowBatch } from '../../src/flowstore/index.js';

/** The zero-setup default: PGlite in DATA_DIR, reached by the CLI through the running server. */
describe('embedded default (PGlite in DATA_DIR)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bd-embedded-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  // Five admin CLI runs (a tsx process each) and two server starts: more than the default minute on a busy host.
  it('serves the CLI while running, and keeps tenants, clients and keys across a restart', async () => {
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: '' };
    let t = await startTestApp({ embedded: true, dataDir });
    const msp = await adminCli(['tenant', 'create', '--name', 'Embedded', '--handle', 'embedded', '--msp'], env);
    expect(msp.code).toBe(0);
    const client = await adminCli(['client', 'create', '--customer', msp.json.customer_id, '--scopes', 'p.token.scope.deployment_api'], env);
    const credentials = { client_id: client.json.client_id, client_secret: client.json.client_secret };
    const token = (await call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: credentials })).body.access_token;
    const created = await call(t.url, 'POST', '/rest/deployments/1.0', {
      token,
      body: { name: 'Child', handle: 'child', parent_id: msp.json.customer_id },
    });
    expect(created.status).toBe(201);
    const flow = { '@timestamp': Date.now(), src: { ip: '10.1.1.1' }, dst: { ip: '1.1.1.1', port: 443 } };
    await insertFlowBatch(t.app.flows, { customerId: msp.json.customer_id, nodeId: 'node_e', batchId: 'b', flows: [flow] });
    // The signing keys are sealed here too: a dump of the table holds no private scalar.
    const { rows } = await t.app.db.pool.query<{ row: string }>('SELECT row_to_json(k)::text AS row FROM signing_keys k');
    const privateScalars = t.app.services.keys.signingSecrets().map((k) => k.d);
    for (const d of privateScalars) expect(rows.map((r) => r.row).join('\n')).not.toContain(d);
    // A new secrets key while the server runs, through its socket; the restart below opens with it.
    const rotated = await adminCli(['secrets', 'rotate'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json.resealed.signing_keys).toBe(privateScalars.length);
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token })).status).toBe(200);
    await t.stop();

    t = await startTestApp({ embedded: true, dataDir });
    try {
      const list = await call(t.url, 'GET', '/rest/deployments/1.0', { token });
      expect(list.status).toBe(200);
      expect(list.body.deployments).toHaveLength(1);
      const flows = await t.app.flows.query<{ n: number }>('/* test_count */ SELECT count() AS n FROM flows WHERE customer_id = {c:String}', {
        c: msp.json.customer_id,
      });
      expect(flows[0].n).toBe(1);
      expect(t.app.flows.kind).toBe('chdb');
      expect((await call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: credentials })).status).toBe(200);
      await adminCli(['client', 'revoke', '--client-id', credentials.client_id], env);
      await expect.poll(async () => (await call(t.url, 'GET', '/rest/deployments/1.0', { token })).status).toBe(401);
    } finally {
      await t.stop();
    }
  }, 150_000);

  it('refuses a second server on a directory that is in use', async () => {
    const t = await startTestApp({ embedded: true, dataDir });
    try {
      await expect(startTestApp({ embedded: true, dataDir })).rejects.toThrow(
        /DATA_DIR .* is in use: process \d+ \(another server\) has its embedded PostgreSQL \(postgres\/\) open/,
      );
    } finally {
      await t.stop();
    }
  });
});
