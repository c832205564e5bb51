import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../../test/kit/admin-cli.js';
import { type TestApp, startTestApp } from '../../test/kit/app.js';
import { createTestDatabase } from '../../test/kit/databases.js';
import { call } from '../../test/kit/http.js';
import { type Caller, seedCaller, seedTenant } from '../../test/kit/seed.js';
import { seedPerson } from '../../test/kit/people.js';
import { createLogger } from '../infra/logger.js';
import { oidcSecretContext } from '../modules/users/oidc.service.js';
import { base32Decode, hotp, totpStep } from '../modules/users/totp.js';
import { tenantOnly } from '../tenancy/tenant-scope.js';
import { Session } from './session.js';
import { applyMigrations, readMigrations } from '../infra/migrate.js';
import { SecretsKey, keyFilePath } from '../infra/secrets-key.js';

/** Everything `pg_dump` would show of the two tables that hold secrets, as text. */
async function dumpSecretTables(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ row: string }>(
      'SELECT row_to_json(k)::text AS row FROM signing_keys k UNION ALL SELECT row_to_json(r)::text FROM automation_rules r',
    );
    return rows.map((r) => r.row).join('\n');
  } finally {
    await client.end();
  }
}

async function query<R extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** How the previous version sealed a webhook secret: under HKDF of the signing key's private scalar. */
function sealLikeThePreviousVersion(signingKey: { kid: string; d: string }, ruleId: string, secret: string): Buffer {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(signingKey.d, 'base64url'), 'breach-detection/automation-webhook-secret/v1', signingKey.kid, 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(ruleId));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

const keyIdOf = (dataDir: string) => SecretsKey.load({ secretsKeys: [], dataDir }, { create: false }).currentId;

const secretOfRule = async (t: TestApp, id: string) =>
  t.app.services.automation.secretOf(await t.app.db.prisma.automationRule.findUniqueOrThrow({ where: { id } }));

async function saveWebhookRule(t: TestApp, caller: Caller, name: string): Promise<{ ruleId: string; secret: string }> {
  const res = await call(t.url, 'POST', '/rest/automation/1.0', {
    token: caller.token,
    body: { name, match: { topic: 'detections' }, action: { type: 'webhook', url: 'http://127.0.0.1:9/hook' } },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { ruleId: res.body.rule.rule_id as string, secret: res.body.secret as string };
}

/** The ids of the keys the stored values are sealed under. */
async function sealedUnder(url: string): Promise<Set<string>> {
  const keys = await query<{ private_box: Buffer }>(url, 'SELECT private_box FROM signing_keys');
  const rules = await query<{ secret_box: Buffer }>(url, 'SELECT secret_box FROM automation_rules WHERE secret_box IS NOT NULL');
  const people = await query<{ totp_box: Buffer }>(url, 'SELECT totp_box FROM users WHERE totp_box IS NOT NULL');
  return new Set(
    [...keys.map((k) => k.private_box), ...rules.map((r) => r.secret_box), ...people.map((p) => p.totp_box)].map((box) => SecretsKey.sealedUnder(box)),
  );
}

/** A person with a TOTP second factor turned on, through the service as the GraphQL mutations call it. */
async function enrolTotp(t: TestApp, customerId: string): Promise<{ userId: string; secret: string }> {
  const person = await seedPerson(t.app, customerId, 'viewer');
  const session = new Session({ userId: person.userId, customerId, role: 'viewer', sessionId: 'ses_x', expiresAt: Date.now() + 60_000 }, async () =>
    tenantOnly(customerId),
  );
  const { secret } = await t.app.services.secondFactor.startEnrolment(session);
  await t.app.services.secondFactor.confirmEnrolment(session, hotp(base32Decode(secret), totpStep(Date.now())));
  return { userId: person.userId, secret };
}

/** Whether the person's sealed TOTP secret still opens: a code of the next step is accepted. */
async function totpOpens(t: TestApp, totp: { userId: string; secret: string }, offset: bigint): Promise<boolean> {
  const user = await t.app.db.prisma.user.findUniqueOrThrow({ where: { id: totp.userId } });
  return (await t.app.services.secondFactor.verify(user, { totpCode: hotp(base32Decode(totp.secret), totpStep(Date.now()) + offset) })) === 'totp';
}

describe('secrets at rest: sealed under the secrets key (DATABASE_URL mode)', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let t: TestApp;
  let caller: Caller;
  let ruleId: string;
  let secret: string;
  let totp: { userId: string; secret: string };
  const start = (env: Record<string, string> = {}, dir = dataDir) =>
    startTestApp({ databaseUrl: database.url, dataDir: dir, env: { AUTOMATION_ALLOW_PRIVATE_TARGETS: 'true', ...env } });
  const cli = (args: string[], env: Record<string, string> = {}) =>
    adminCli(args, { DATABASE_URL: database.url, DATA_DIR: dataDir, SECRETS_KEY: '', LOG_LEVEL: 'silent', ...env });
  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'bd-sealed-'));
    t = await start();
    caller = await seedCaller(t.app, (await seedTenant(t.app, { msp: true })).id);
    ({ ruleId, secret } = await saveWebhookRule(t, caller, 'sealed'));
    totp = await enrolTotp(t, caller.customerId);
    // A tenant's single sign-on client secret, sealed as configureSingleSignOn seals it.
    const box = SecretsKey.load({ secretsKeys: [], dataDir }, { create: false }).seal(oidcSecretContext(caller.customerId), 'sso client secret');
    await t.app.db.prisma.oidcProvider.create({
      data: { customerId: caller.customerId, issuer: 'https://idp.example.com/', clientId: 'c', clientSecretBox: new Uint8Array(box) },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps no usable private key or webhook secret in a dump of the database', async () => {
    const dump = await dumpSecretTables(database.url);
    const privateScalars = t.app.services.keys.signingSecrets().map((s) => s.d);
    expect(privateScalars.length).toBeGreaterThan(0);
    for (const d of privateScalars) {
      expect(dump).not.toContain(d);
      expect(dump).not.toContain(Buffer.from(d, 'base64url').toString('hex'));
    }
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(Buffer.from(secret).toString('hex'));
    expect(dump).not.toMatch(/"d"\s*:/);
    // The server itself still signs, verifies and opens them.
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: caller.token })).status).toBe(200);
    expect(await secretOfRule(t, ruleId)).toBe(secret);
    expect(statSync(keyFilePath(dataDir)).mode & 0o777).toBe(0o600);
    expect(await sealedUnder(database.url)).toEqual(new Set([keyIdOf(dataDir)]));
  });

  it("re-seals an older version's plaintext signing keys and derived webhook secrets at start, keeping their values", async () => {
    const before = t.app.services.keys.signingSecrets();
    await t.app.stop();
    // Put the rows back as the previous version wrote them.
    const keys = await query<{ kid: string; public_jwk: object }>(database.url, 'SELECT kid, public_jwk FROM signing_keys');
    for (const key of keys) {
      const d = before.find((s) => s.kid === key.kid)!.d;
      await query(database.url, 'UPDATE signing_keys SET legacy_private_jwk = $2, private_box = NULL WHERE kid = $1', [key.kid, { ...key.public_jwk, d }]);
    }
    const signer = before.filter((s) => s.retiredAt === null).at(-1)!;
    await query(database.url, 'UPDATE automation_rules SET legacy_secret_kid = $2, secret_box = $3 WHERE id = $1', [
      ruleId,
      signer.kid,
      sealLikeThePreviousVersion(signer, ruleId, secret),
    ]);
    expect(await dumpSecretTables(database.url)).toContain(signer.d);

    t = await start();
    const legacy = await query(database.url, 'SELECT kid FROM signing_keys WHERE legacy_private_jwk IS NOT NULL OR private_box IS NULL');
    expect(legacy).toEqual([]);
    expect(await query(database.url, 'SELECT id FROM automation_rules WHERE legacy_secret_kid IS NOT NULL')).toEqual([]);
    expect(await dumpSecretTables(database.url)).not.toContain(signer.d);
    expect(await sealedUnder(database.url)).toEqual(new Set([keyIdOf(dataDir)]));
    // Same keys, same secret: tokens issued before still pass, receivers keep their secret.
    expect(t.app.services.keys.signingSecrets()).toEqual(before);
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: caller.token })).status).toBe(200);
    expect(await secretOfRule(t, ruleId)).toBe(secret);
  });

  it('refuses to start when the secrets key does not open the stored signing keys, and creates no key', async () => {
    const count = await t.app.db.prisma.signingKey.count();
    const otherDir = mkdtempSync(join(tmpdir(), 'bd-sealed-other-'));
    try {
      await expect(start({ SECRETS_KEY: randomBytes(32).toString('base64') }, otherDir)).rejects.toThrow(
        /^SECRETS_KEY does not open the stored signing keys: signing_keys\.private_jwk:\S+ is sealed under secrets key [0-9a-f]{16}, which SECRETS_KEY does not hold/,
      );
      // A second host with a key file of its own is told the same, not given a new key.
      await expect(start({}, otherDir)).rejects.toThrow(/^SECRETS_KEY \(unset, so \S+secrets\.key\) does not open the stored signing keys/);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
    expect(await t.app.db.prisma.signingKey.count()).toBe(count);
  });

  it('secrets rotate re-seals every value under a new key while the server runs', async () => {
    const first = keyIdOf(dataDir);
    const rotated = await cli(['secrets', 'rotate']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const second = rotated.json.secrets_key_id;
    expect(rotated.json).toEqual({
      secrets_key_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      previous_key_id: first,
      source: `SECRETS_KEY (unset, so ${keyFilePath(dataDir)})`,
      resealed: { signing_keys: await t.app.db.prisma.signingKey.count(), webhook_secrets: 1, totp_secrets: 1, oidc_secrets: 1 },
    });
    expect(second).not.toBe(first);
    expect(keyIdOf(dataDir)).toBe(second);
    expect(statSync(keyFilePath(dataDir)).mode & 0o777).toBe(0o600);
    expect(await sealedUnder(database.url)).toEqual(new Set([second]));

    // The running server opens the re-sealed values and seals new ones under the new key.
    expect(await secretOfRule(t, ruleId)).toBe(secret);
    expect(await totpOpens(t, totp, 1n)).toBe(true);
    const { clientSecretBox } = await t.app.db.prisma.oidcProvider.findUniqueOrThrow({ where: { customerId: caller.customerId } });
    expect(SecretsKey.sealedUnder(Buffer.from(clientSecretBox))).toBe(second);
    expect(SecretsKey.load({ secretsKeys: [], dataDir }, { create: false }).open(oidcSecretContext(caller.customerId), clientSecretBox)).toBe(
      'sso client secret',
    );
    const added = await saveWebhookRule(t, caller, 'after rotation');
    expect(await secretOfRule(t, added.ruleId)).toBe(added.secret);
    expect(await sealedUnder(database.url)).toEqual(new Set([second]));
    // A signing key rotated now is sealed under the new key, and the server loads and signs with it.
    const keyRotated = await cli(['key', 'rotate']);
    expect(keyRotated.code, keyRotated.stderr).toBe(0);
    const issue = () => call(t.url, 'POST', '/rest/oauth2/token/1.0', { body: { client_id: caller.clientId, client_secret: caller.clientSecret } });
    await expect.poll(async () => decodeProtectedHeader((await issue()).body.access_token).kid).toBe(keyRotated.json.kid);
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: (await issue()).body.access_token })).status).toBe(200);

    // The file keeps the current key and the one before it, no older.
    const again = await cli(['secrets', 'rotate']);
    expect(again.json.previous_key_id).toBe(second);
    expect(readFileSync(keyFilePath(dataDir), 'utf8').trim().split('\n')).toHaveLength(2);
    const ring = SecretsKey.load({ secretsKeys: [], dataDir }, { create: false });
    const [firstBox] = await query<{ secret_box: Buffer }>(database.url, 'SELECT secret_box FROM automation_rules WHERE id = $1', [ruleId]);
    expect(SecretsKey.sealedUnder(firstBox.secret_box)).toBe(ring.currentId);
    expect(await secretOfRule(t, ruleId)).toBe(secret);

    // And a restart opens everything with the file.
    await t.app.stop();
    t = await start();
    expect(await secretOfRule(t, ruleId)).toBe(secret);
  });
});

describe('secrets rotate with SECRETS_KEY, while servers run (the steps of docs/secrets.md)', () => {
  const OLD = randomBytes(32).toString('base64');
  const NEW = randomBytes(32).toString('base64url');
  const idOf = (key: string) => SecretsKey.load({ secretsKeys: [Buffer.from(key, 'base64')], dataDir: '/nonexistent' }, { create: false }).currentId;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let t: TestApp | undefined;
  const start = (secretsKey: string) =>
    startTestApp({ databaseUrl: database.url, dataDir, env: { SECRETS_KEY: secretsKey, AUTOMATION_ALLOW_PRIVATE_TARGETS: 'true' } });
  const rotate = (secretsKey: string) =>
    adminCli(['secrets', 'rotate'], { DATABASE_URL: database.url, DATA_DIR: dataDir, SECRETS_KEY: secretsKey, LOG_LEVEL: 'silent' });

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'bd-sealed-env-'));
  });
  afterAll(async () => {
    await t?.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('moves every value from OLD to NEW and no server fails to open one', async () => {
    t = await start(OLD);
    const caller = await seedCaller(t.app, (await seedTenant(t.app, { msp: true })).id);
    const first = await saveWebhookRule(t, caller, 'before');
    expect(await sealedUnder(database.url)).toEqual(new Set([idOf(OLD)]));
    await t.app.stop();

    t = await start(`${OLD},${NEW}`);
    const rotated = await rotate(`${NEW},${OLD}`);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json).toMatchObject({ secrets_key_id: idOf(NEW), previous_key_id: null, source: 'SECRETS_KEY', resealed: { webhook_secrets: 1 } });
    expect(await sealedUnder(database.url)).toEqual(new Set([idOf(NEW)]));
    // The server, still sealing under OLD, opens what is now under NEW.
    expect(await secretOfRule(t, first.ruleId)).toBe(first.secret);
    const between = await saveWebhookRule(t, caller, 'between');
    expect(await sealedUnder(database.url)).toEqual(new Set([idOf(NEW), idOf(OLD)]));
    await t.app.stop();

    t = await start(`${NEW},${OLD}`);
    expect((await rotate(`${NEW},${OLD}`)).json.resealed.webhook_secrets).toBe(2);
    expect(await sealedUnder(database.url)).toEqual(new Set([idOf(NEW)]));
    await t.app.stop();

    t = await start(NEW);
    expect(await secretOfRule(t, first.ruleId)).toBe(first.secret);
    expect(await secretOfRule(t, between.ruleId)).toBe(between.secret);
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: caller.token })).status).toBe(200);
  });
});

describe('upgrading a database the previous version wrote', () => {
  it('applies 0006 and seals its plaintext signing key and derived webhook secret at start, keeping both', async () => {
    const database = await createTestDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), 'bd-sealed-upgrade-'));
    let t: TestApp | undefined;
    try {
      const pool = new pg.Pool({ connectionString: database.url, max: 1 });
      await applyMigrations(
        pool,
        createLogger('silent'),
        readMigrations().filter((m) => m.name < '0006'),
      );
      const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
      const privateJwk = await exportJWK(privateKey);
      const secret = `whsec_${randomBytes(32).toString('base64url')}`;
      await pool.query(`INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk) VALUES ('key_old', 'ES256', $1, $2)`, [
        privateJwk,
        await exportJWK(publicKey),
      ]);
      await pool.query(`INSERT INTO tenants (id, name, handle, type, is_msp) VALUES ('cus_old', 'Old', 'old', 'msp', true)`);
      await pool.query(
        `INSERT INTO automation_rules (id, customer_id, name, topic, action, webhook_url, secret_kid, secret_box)
         VALUES ('rule_old', 'cus_old', 'r', 'detections', 'webhook', 'https://example.com/h', 'key_old', $1)`,
        [sealLikeThePreviousVersion({ kid: 'key_old', d: privateJwk.d! }, 'rule_old', secret)],
      );
      await pool.end();

      t = await startTestApp({ databaseUrl: database.url, dataDir });
      const dump = await dumpSecretTables(database.url);
      expect(dump).not.toContain(privateJwk.d);
      expect(dump).not.toContain(secret);
      expect(await sealedUnder(database.url)).toEqual(new Set([keyIdOf(dataDir)]));
      expect(t.app.services.keys.signingSecrets()).toMatchObject([{ kid: 'key_old', d: privateJwk.d }]);
      expect(await t.app.services.keys.verificationKey('key_old')).toBeDefined();
      expect(await secretOfRule(t, 'rule_old')).toBe(secret);
    } finally {
      await t?.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
