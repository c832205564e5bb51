import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../../../test/kit/admin-cli.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { graphql } from '../../../test/kit/http.js';
import { seedCaller, seedTenant } from '../../../test/kit/seed.js';
import { MAX_FILE_BYTES, parseNetworkFile } from './networks.file.js';

describe('network files', () => {
  it('reads CSV with a header, comments, blank lines and quoted names', () => {
    const text =
      '# lab plan\ncidr,name,kind\n10.99.0.0/16,Lab Internet,external\n\n198.51.100.0/24,"Bank, Inc. ""EU""",EXTERNAL\r\n10.20.0.0/16 , Lab , internal\n';
    expect(parseNetworkFile(text, 'plan.csv')).toEqual({
      networks: [
        { cidr: '10.99.0.0/16', name: 'Lab Internet', kind: 'external' },
        { cidr: '198.51.100.0/24', name: 'Bank, Inc. "EU"', kind: 'EXTERNAL' },
        { cidr: '10.20.0.0/16', name: 'Lab', kind: 'internal' },
      ],
      lines: [3, 5, 6],
    });
  });

  it('reads JSON lines, by extension or by the first entry', () => {
    const text =
      '{"cidr": "2001:db8::/32", "name": "Partner v6", "kind": "external"}\n# comment\n{"cidr": "10.0.0.0/8", "name": "Corp", "kind": "internal", "note": "ignored"}';
    for (const name of ['plan.jsonl', 'plan.txt']) {
      expect(parseNetworkFile(text, name).networks).toEqual([
        { cidr: '2001:db8::/32', name: 'Partner v6', kind: 'external' },
        { cidr: '10.0.0.0/8', name: 'Corp', kind: 'internal' },
      ]);
    }
  });

  it('names the line of what it cannot read, and refuses oversized files', () => {
    expect(() => parseNetworkFile('10.0.0.0/8,Corp,internal\n10.1.0.0/16,Lab\n', 'x.csv')).toThrow(/^line 2: is not `cidr,name,kind`/);
    expect(() => parseNetworkFile('10.0.0.0/8,Acme, Inc.,external', 'x.csv')).toThrow(/quote a name that holds a comma/);
    expect(() => parseNetworkFile('{"cidr": "10.0.0.0/8"}\n{nope}', 'x.jsonl')).toThrow(/^line 2: is not a JSON object/);
    expect(() => parseNetworkFile('["10.0.0.0/8"]', 'x.jsonl')).toThrow(/^line 1: is not a JSON object/);
    expect(() => parseNetworkFile('#'.repeat(MAX_FILE_BYTES + 1), 'x.csv')).toThrow(/larger than/);
  });
});

describe('networks import and list in the admin CLI, while the server runs', () => {
  let t: TestApp;
  let env: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'networks-cli-'));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  beforeAll(async () => {
    t = await startTestApp();
    env = { DATABASE_URL: t.config.databaseUrl!, LOG_LEVEL: 'silent' };
  });
  afterAll(async () => {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("replaces a tenant's list from CSV, adds JSON lines, and the server answers with them at once", async () => {
    const tenant = await seedTenant(t.app);
    const caller = await seedCaller(t.app, tenant.id);
    const csv = file('plan.csv', 'cidr,name,kind\n10.99.0.0/16,Lab Internet,external\n::ffff:10.20.0.0/112,Lab,internal\n');
    const imported = await adminCli(['networks', 'import', '--customer', tenant.id, '--file', csv], env);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.json).toEqual({
      customer_id: tenant.id,
      imported: 2,
      networks: [
        { cidr: '10.20.0.0/16', name: 'Lab', kind: 'internal' },
        { cidr: '10.99.0.0/16', name: 'Lab Internet', kind: 'external' },
      ],
    });
    const jsonl = file('more.jsonl', '{"cidr": "198.51.100.0/24", "name": "Partner", "kind": "external"}\n');
    expect((await adminCli(['networks', 'import', '--customer', tenant.id, '--file', jsonl, '--add'], env)).json.networks).toHaveLength(3);
    const listed = await graphql(t.url, 'query { ownNetworks { cidr name kind } }', {}, caller.token);
    expect(listed.data.ownNetworks.map((n: { cidr: string }) => n.cidr)).toEqual(['10.20.0.0/16', '10.99.0.0/16', '198.51.100.0/24']);
    expect((await adminCli(['networks', 'list', '--customer', tenant.id], env)).json).toHaveLength(3);
    // Importing without --add replaces the whole list.
    expect((await adminCli(['networks', 'import', '--customer', tenant.id, '--file', jsonl], env)).json.networks).toEqual([
      { cidr: '198.51.100.0/24', name: 'Partner', kind: 'external' },
    ]);
  });

  it('refuses a bad file naming the line, changing nothing, and unknown tenants or files', async () => {
    const tenant = await seedTenant(t.app);
    const good = file('good.csv', '10.99.0.0/16,Lab Internet,external\n');
    await adminCli(['networks', 'import', '--customer', tenant.id, '--file', good], env);
    const cases: [string, RegExp][] = [
      ['10.0.0.0/8,Corp,internal\n10.0.0.1/8,Again,internal\n', /^line 2\.cidr "10\.0\.0\.1\/8" has host bits set/],
      ['10.0.0.0/8,Corp,internal\n::ffff:10.0.0.0/104,Same,internal\n', /^line 2\.cidr 10\.0\.0\.0\/8 is given twice \(also line 1\)/],
      ['# header\n10.0.0.0/8,Corp,sideways\n', /^line 2\.kind must be one of internal, external/],
      ['10.0.0.0/8,,internal\n', /^line 1\.name is required/],
    ];
    for (const [text, message] of cases) {
      const res = await adminCli(['networks', 'import', '--customer', tenant.id, '--file', file('bad.csv', text)], env);
      expect(res.code).toBe(1);
      expect(JSON.parse(res.stderr).error).toBe('validation_error');
      expect(JSON.parse(res.stderr).message).toMatch(message);
    }
    const exists = await adminCli(['networks', 'import', '--customer', tenant.id, '--file', good, '--add'], env);
    expect(JSON.parse(exists.stderr)).toMatchObject({
      error: 'own_network_exists',
      message: 'line 1.cidr: 10.99.0.0/16 is already mapped to Lab Internet; remove it first, or replace the list',
    });
    const tooMany = file('many.csv', Array.from({ length: 1001 }, (_, i) => `172.16.${i >> 8}.${i & 255}/32,host ${i},internal`).join('\n'));
    expect(JSON.parse((await adminCli(['networks', 'import', '--customer', tenant.id, '--file', tooMany], env)).stderr)).toMatchObject({
      error: 'validation_error',
      message: 'at most 1000 networks per tenant',
    });
    expect((await adminCli(['networks', 'list', '--customer', tenant.id], env)).json).toEqual([
      { cidr: '10.99.0.0/16', name: 'Lab Internet', kind: 'external' },
    ]);
    expect(JSON.parse((await adminCli(['networks', 'import', '--customer', 'cus_nope', '--file', good], env)).stderr)).toMatchObject({ error: 'not_found' });
    expect(JSON.parse((await adminCli(['networks', 'import', '--customer', tenant.id, '--file', join(dir, 'missing.csv')], env)).stderr)).toMatchObject({
      error: 'invalid_file',
      message: expect.stringContaining('ENOENT'),
    });
    expect((await adminCli(['networks', 'import', '--file', good], env)).code).toBe(2);
  }, 120_000);
});
