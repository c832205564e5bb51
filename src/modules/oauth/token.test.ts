import { SignJWT, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { withLowS } from '../../auth/low-s.js';
import { call, fetchDocumented } from '../../../test/kit/http.js';
import { type Caller, seedCaller, seedTenant } from '../../../test/kit/seed.js';

const TOKEN = '/rest/oauth2/token/1.0';

describe('POST /rest/oauth2/token/1.0', () => {
  let t: TestApp;
  let caller: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    const tenant = await seedTenant(t.app);
    caller = await seedCaller(t.app, tenant.id, ['p.token.scope.node_api', 'p.token.scope.deployment_api']);
  });
  afterAll(() => t.stop());

  it('issues a JWT for JSON credentials without grant_type, with all four fields', async () => {
    const res = await call(t.url, 'POST', TOKEN, { body: { client_id: caller.clientId, client_secret: caller.clientSecret } });
    expect(res.status).toBe(200);
    const now = Math.floor(Date.now() / 1000);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(res.body.expires_at).toBeGreaterThanOrEqual(now + 3599);
    expect(res.body.expires_at).toBeLessThanOrEqual(now + 3601);
    const header = decodeProtectedHeader(res.body.access_token);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    expect(header.kid).toEqual(expect.any(String));
    const claims = decodeJwt(res.body.access_token);
    expect(claims.aud).toBe(caller.customerId);
    expect(claims.scopes).toEqual(['p.token.scope.node_api', 'p.token.scope.deployment_api']);
    expect(claims.exp).toBe(res.body.expires_at);
  });

  it('accepts form-encoded credentials with grant_type=client_credentials', async () => {
    const res = await fetchDocumented(t.url + TOKEN, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: caller.clientId, client_secret: caller.clientSecret }),
    });
    expect(res.status).toBe(200);
    expect(decodeJwt(((await res.json()) as { access_token: string }).access_token).aud).toBe(caller.customerId);
  });

  it('refuses another grant type with 400 unsupported_grant_type, in a form or in JSON', async () => {
    const credentials = { client_id: caller.clientId, client_secret: caller.clientSecret };
    const refused = { error: 'unsupported_grant_type', code: 'unsupported_grant_type', message: 'grant_type must be client_credentials' };
    const form = await fetchDocumented(t.url + TOKEN, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', ...credentials }),
    });
    expect(form.status).toBe(400);
    expect(await form.json()).toEqual(refused);
    const json = await call(t.url, 'POST', TOKEN, { body: { grant_type: 'refresh_token', ...credentials } });
    expect([json.status, json.body]).toEqual([400, refused]);
    const named = await call(t.url, 'POST', TOKEN, { body: { grant_type: 'client_credentials', ...credentials } });
    expect(named.status).toBe(200);
  });

  describe('HTTP Basic client authentication (RFC 6749 2.3.1), as OAuth2 client libraries send it', () => {
    const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    const form = (headers: Record<string, string>, fields: Record<string, string> = { grant_type: 'client_credentials' }) =>
      fetch(t.url + TOKEN, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields) });

    it('issues a token for credentials in the header, each half form-urlencoded', async () => {
      // Percent-escapes of characters that need none (`_` is %5F): the halves are decoded before use.
      const escaped = (text: string) => text.replaceAll('_', '%5F');
      const res = await form({ authorization: basic(escaped(caller.clientId), escaped(caller.clientSecret)) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_at', 'expires_in', 'token_type']);
      expect(decodeJwt(body.access_token as string)).toMatchObject({ aud: caller.customerId, sub: caller.clientId });
      const json = await call(t.url, 'POST', TOKEN, { headers: { authorization: basic(caller.clientId, caller.clientSecret) }, rawBody: '' });
      expect(json.status).toBe(200);
    });

    it('answers bad Basic credentials with the very 401 the body gets', async () => {
      const viaHeader = await form({ authorization: basic(caller.clientId, 'wrong') });
      const viaBody = await form({}, { grant_type: 'client_credentials', client_id: caller.clientId, client_secret: 'wrong' });
      expect([viaHeader.status, await viaHeader.text()]).toEqual([401, await viaBody.text()]);
      expect(viaBody.status).toBe(401);
      // The challenge of the scheme the client used (RFC 6749 5.2); none for credentials in the body.
      expect(viaHeader.headers.get('www-authenticate')).toBe('Basic realm="token", charset="UTF-8"');
      expect(viaBody.headers.get('www-authenticate')).toBeNull();
    });

    it('refuses a malformed Basic header with 401 invalid_credentials', async () => {
      for (const header of ['Basic', 'Basic !!!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, basic('cl_%zz', 'x'), 'Basic abc']) {
        const res = await form({ authorization: header });
        expect(res.status, header).toBe(401);
        expect(res.headers.get('www-authenticate'), header).toBe('Basic realm="token", charset="UTF-8"');
        expect(await res.json(), header).toEqual({
          error: 'invalid_credentials',
          code: 'invalid_credentials',
          message: 'Authorization header must be "Basic " and base64 of client_id:client_secret',
        });
      }
    });

    it('refuses credentials in both the header and the body with 400 invalid_request', async () => {
      const both = { grant_type: 'client_credentials', client_id: caller.clientId, client_secret: caller.clientSecret };
      for (const fields of [both, { grant_type: 'client_credentials', client_id: caller.clientId }]) {
        const res = await form({ authorization: basic(caller.clientId, caller.clientSecret) }, fields);
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual({
          error: 'invalid_request',
          code: 'invalid_request',
          message: 'Send the client credentials in the Authorization header or in the body, not both',
        });
      }
    });

    it('ignores a Bearer header, as before: the body is the credentials', async () => {
      const res = await call(t.url, 'POST', TOKEN, { token: 'x.y.z', body: { client_id: caller.clientId, client_secret: caller.clientSecret } });
      expect(res.status).toBe(200);
    });
  });

  it('tolerates extra properties', async () => {
    const res = await call(t.url, 'POST', TOKEN, {
      body: { client_id: caller.clientId, client_secret: caller.clientSecret, audience: 'x', extra: { a: 1 } },
    });
    expect(res.status).toBe(200);
  });

  it('serves the public keys that verify its tokens at /.well-known/jwks.json', async () => {
    const res = await call(t.url, 'POST', TOKEN, { body: { client_id: caller.clientId, client_secret: caller.clientSecret } });
    const jwks = createRemoteJWKSet(new URL(t.url + '/.well-known/jwks.json'));
    const { payload } = await jwtVerify(res.body.access_token, jwks, { audience: caller.customerId });
    expect(payload.sub).toBe(caller.clientId);
  });

  it.each([
    ['wrong secret', () => ({ client_id: caller.clientId, client_secret: 'nope' })],
    ['unknown client', () => ({ client_id: 'cl_unknown', client_secret: caller.clientSecret })],
    ['missing secret', () => ({ client_id: caller.clientId })],
    ['missing both', () => ({})],
    ['oversize', () => ({ client_id: 'x'.repeat(10_000), client_secret: 'y'.repeat(10_000) })],
    ['unicode', () => ({ client_id: 'clé_☃', client_secret: '秘密' })],
    ['access key as id', () => ({ client_id: `${caller.clientId}.${caller.clientSecret}`, client_secret: 'x' })],
  ])('answers 401 invalid_credentials as JSON for %s', async (_name, body) => {
    const res = await call(t.url, 'POST', TOKEN, { body: body() });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'invalid_credentials', code: 'invalid_credentials' });
    expect(res.body.message).toEqual(expect.any(String));
  });

  it.each([
    ['numbers', { client_id: 1, client_secret: 2 }],
    ['objects', { client_id: { a: 1 }, client_secret: [1] }],
    ['booleans', { client_id: true, client_secret: false }],
  ])('answers 400 invalid_request for %s instead of strings', async (_name, body) => {
    const res = await call(t.url, 'POST', TOKEN, { body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', code: 'invalid_request' });
  });

  it('answers 400 invalid_json for a malformed body', async () => {
    const res = await call(t.url, 'POST', TOKEN, { rawBody: '{"client_id":' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_json', code: 'invalid_json' });
  });

  it('stops issuing and honouring tokens once the client is revoked', async () => {
    const tenant = await seedTenant(t.app);
    const revoked = await seedCaller(t.app, tenant.id, ['p.token.scope.deployment_api']);
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: revoked.token })).status).toBe(200);
    await t.app.services.clients.revoke(revoked.clientId);
    await expect.poll(async () => (await call(t.url, 'GET', '/rest/deployments/1.0', { token: revoked.token })).status).toBe(401);
    const res = await call(t.url, 'POST', TOKEN, { body: { client_id: revoked.clientId, client_secret: revoked.clientSecret } });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_credentials');
  });
});

describe('bearer token checks (api-spec.md section 5)', () => {
  let t: TestApp;
  let caller: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    caller = await seedCaller(t.app, (await seedTenant(t.app, { msp: true })).id, ['p.token.scope.node_api']);
  });
  afterAll(() => t.stop());

  const signWith = async (claims: Record<string, unknown>, exp: number) => {
    const { kid, key } = t.app.services.keys.signingKey();
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer('breach-detection')
      .setAudience(caller.customerId)
      .setSubject(caller.clientId)
      .setExpirationTime(exp)
      .sign(key);
    return withLowS(token);
  };

  it.each([
    ['no header', undefined, 'missing_token'],
    ['garbage', 'Bearer not-a-jwt', 'invalid_token'],
    ['wrong scheme', 'Basic abc', 'invalid_token'],
  ])('answers 401 authentication_error for %s', async (_name, authorization, reason) => {
    const res = await call(t.url, 'GET', '/rest/deployments/1.0', { headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: 'authentication_error', code: 'authentication_error' });
    expect(reason).toBeTruthy();
  });

  it('answers 401 for an expired token', async () => {
    const token = await signWith({ scopes: ['p.token.scope.deployment_api'] }, Math.floor(Date.now() / 1000) - 10);
    const res = await call(t.url, 'GET', '/rest/deployments/1.0', { token });
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('Access token expired');
  });

  it('answers 401 for a tampered signature', async () => {
    const good = await signWith({ scopes: ['p.token.scope.deployment_api'] }, Math.floor(Date.now() / 1000) + 60);
    const [h, p, s] = good.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...decodeJwt(good), scopes: ['p.token.scope.deployment_api', 'x'] })).toString('base64url');
    for (const token of [`${h}.${forgedPayload}.${s}`, `${h}.${p}.${s.slice(0, -4)}AAAA`]) {
      expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token })).status).toBe(401);
    }
  });

  /** P-256's group order: (r, n − s) verifies wherever (r, s) does. */
  const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
  const sOf = (token: string) => BigInt(`0x${Buffer.from(token.split('.')[2]!, 'base64url').subarray(32).toString('hex')}`);
  const malleated = (token: string) => {
    const [h, p, s] = token.split('.');
    const signature = Buffer.from(s!, 'base64url');
    const twin = Buffer.from((N - sOf(token)).toString(16).padStart(64, '0'), 'hex');
    return `${h}.${p}.${Buffer.concat([signature.subarray(0, 32), twin]).toString('base64url')}`;
  };

  it('signs every token with a low S, and refuses its malleated twin (high S) with 401', async () => {
    const deployer = await seedCaller(t.app, caller.customerId, ['p.token.scope.deployment_api']);
    const tokens = await Promise.all(
      Array.from({ length: 24 }, async () => {
        const res = await call(t.url, 'POST', TOKEN, { body: { client_id: deployer.clientId, client_secret: deployer.clientSecret } });
        return res.body.access_token as string;
      }),
    );
    // WebCrypto's S is high half the time: 24 low ones by chance is a 1 in 16 million event.
    for (const token of tokens) expect(sOf(token) <= N / 2n).toBe(true);
    const genuine = tokens[0]!;
    const twin = malleated(genuine);
    // The twin is a valid ECDSA signature: only the low-S rule tells it apart.
    const { kid } = decodeProtectedHeader(genuine);
    const row = await t.app.db.prisma.signingKey.findUniqueOrThrow({ where: { kid } });
    await expect(jwtVerify(twin, await importJWK(row.publicJwk as never, 'ES256'))).resolves.toBeDefined();
    const refused = await call(t.url, 'GET', '/rest/deployments/1.0', { token: twin });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'authentication_error', message: 'Access token is invalid' });
    // …also once the genuine token has been verified and remembered.
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: genuine })).status).toBe(200);
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: twin })).status).toBe(401);
  });

  it('refuses a genuine signature spelt with unused base64url bits set', async () => {
    const genuine = await signWith({ scopes: ['p.token.scope.deployment_api'] }, Math.floor(Date.now() / 1000) + 60);
    const [h, p, s] = genuine.split('.');
    // 64 bytes are 86 characters; the last one carries 4 bits that decoding ignores.
    const last = s!.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelt = `${h}.${p}.${s!.slice(0, -1)}${alphabet[alphabet.indexOf(last) | 1]}`;
    expect(Buffer.from(respelt.split('.')[2]!, 'base64url')).toEqual(Buffer.from(s!, 'base64url'));
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: respelt })).status).toBe(401);
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: genuine })).status).not.toBe(401);
  });

  it('answers 403 authorization_error naming the scope when it is missing', async () => {
    const res = await call(t.url, 'GET', '/rest/deployments/1.0', { token: caller.token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'authorization_error',
      code: 'authorization_error',
      message: 'Token is missing the required scope: p.token.scope.deployment_api',
    });
  });

  it('keeps verifying old tokens after a key rotation and signs new ones with the new key', async () => {
    const deployer = await seedCaller(t.app, caller.customerId, ['p.token.scope.deployment_api']);
    const oldKid = decodeProtectedHeader(deployer.token).kid;
    const newKid = await t.app.services.keys.rotate();
    expect(newKid).not.toBe(oldKid);
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: deployer.token })).status).toBe(200);
    const fresh = await call(t.url, 'POST', TOKEN, { body: { client_id: deployer.clientId, client_secret: deployer.clientSecret } });
    expect(decodeProtectedHeader(fresh.body.access_token).kid).toBe(newKid);
    const kids = (await call(t.url, 'GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    expect(kids).toEqual(expect.arrayContaining([oldKid, newKid]));
  });
});
