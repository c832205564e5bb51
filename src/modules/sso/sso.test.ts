import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { graphql } from '../../../test/kit/http.js';
import { type TestProvider, signInAtProvider, startTestProvider } from '../../../test/kit/oidc-provider.js';
import { seedCaller, seedTree } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';

const save = `mutation($customerId: String!, $input: SsoConnectionInput!) {
  saveSsoConnection(customerId: $customerId, input: $input) { customerId issuer clientId groupsClaim redirectUri roleRules { group emailDomain role } }
}`;
const read = `query($customerId: String!) { ssoConnection(customerId: $customerId) { issuer clientId roleRules { group emailDomain role } } }`;
const remove = `mutation($customerId: String!) { deleteSsoConnection(customerId: $customerId) }`;

const ACCOUNTS = {
  alice: { email: 'Alice@Corp.Example', groups: ['sec-admins'] },
  bob: { email: 'bob@corp.example' },
  mallory: { email: 'mallory@elsewhere.example' },
  unverified: { email: 'eve@corp.example', emailVerified: false },
};

describe('single sign-on with OpenID Connect, against a real provider', () => {
  let t: TestApp;
  let provider: TestProvider;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  const rules = [
    { group: 'sec-admins', role: 'ADMIN' },
    { emailDomain: 'corp.example', role: 'VIEWER' },
  ];
  const input = () => ({ issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret, roleRules: rules });

  beforeAll(async () => {
    t = await startTestApp({ env: { SSO_ALLOW_PRIVATE_ISSUERS: 'true' } });
    provider = await startTestProvider(`${t.url}/auth/sso/callback`, ACCOUNTS);
    tree = await seedTree(t.app);
  });
  afterAll(async () => {
    await provider?.stop();
    await t?.stop();
  });

  /** Signs in at the provider as `login` for the tenant, and hands the callback to the service as the browser would. */
  async function signIn(customerId: string, login: string) {
    const { location, state } = await t.app.services.sso.begin(customerId, '/console/');
    const back = await signInAtProvider(location, login, `${t.url}/auth/sso/callback`);
    return { back, state, person: () => t.app.services.sso.finish(back.searchParams, state) };
  }

  it('saves a connection after discovery, shows it without its secret, and the MSP manages its children', async () => {
    const saved = await graphql(t.url, save, { customerId: tree.childA.id, input: input() }, tree.childACaller.token);
    expect(saved.errors).toBeUndefined();
    expect(saved.data.saveSsoConnection).toEqual({
      customerId: tree.childA.id,
      issuer: provider.issuer,
      clientId: provider.clientId,
      groupsClaim: 'groups',
      redirectUri: `${t.url}/auth/sso/callback`,
      roleRules: [
        { group: 'sec-admins', emailDomain: null, role: 'ADMIN' },
        { group: null, emailDomain: 'corp.example', role: 'VIEWER' },
      ],
    });
    expect(JSON.stringify(saved)).not.toContain(provider.clientSecret);
    const byParent = await graphql(t.url, read, { customerId: tree.childA.id }, tree.mspCaller.token);
    expect(byParent.data.ssoConnection.issuer).toBe(provider.issuer);
    // The secret is kept when a change omits it; it is sealed in the database.
    const { clientSecret: _omitted, ...withoutSecret } = input();
    expect((await graphql(t.url, save, { customerId: tree.childA.id, input: withoutSecret }, tree.childACaller.token)).errors).toBeUndefined();
    const row = await t.app.db.prisma.ssoConnection.findUniqueOrThrow({ where: { customerId: tree.childA.id } });
    expect(Buffer.from(row.clientSecretBox).toString('latin1')).not.toContain(provider.clientSecret);
  });

  it('refuses what it cannot use, each with a clear error', async () => {
    const refusal = async (customerId: string, value: object, token = tree.childBCaller.token) =>
      (await graphql(t.url, save, { customerId, input: { ...input(), ...value } }, token)).errors?.[0];
    expect(await refusal(tree.childB.id, { issuer: 'http://127.0.0.1:9' })).toMatchObject({ extensions: { code: 'sso_provider_unreachable' } });
    expect(await refusal(tree.childB.id, { issuer: 'ftp://idp.example' })).toMatchObject({ extensions: { code: 'invalid_request' } });
    expect(await refusal(tree.childB.id, { roleRules: [] })).toMatchObject({ extensions: { code: 'invalid_request' } });
    expect(await refusal(tree.childB.id, { roleRules: [{ group: 'a', emailDomain: 'b.example', role: 'ADMIN' }] })).toMatchObject({
      message: 'roleRules[0] must name either a group or an emailDomain',
    });
    expect(await refusal(tree.childB.id, { roleRules: [{ emailDomain: 'not a domain', role: 'ADMIN' }] })).toMatchObject({
      extensions: { code: 'invalid_request' },
    });
    expect(await refusal(tree.childB.id, { clientSecret: null })).toMatchObject({ extensions: { code: 'missing_required_fields' } });
    // Another tree's tenant is not found; a token without node_api is refused.
    expect(await refusal(tree.childB.id, {}, tree.childACaller.token)).toMatchObject({ extensions: { code: 'not_found' } });
    const searchOnly = await seedCaller(t.app, tree.childB.id, [Scopes.searchApi]);
    expect(await refusal(tree.childB.id, {}, searchOnly.token)).toMatchObject({ extensions: { code: 'authorization_error' } });
  });

  it('refuses private and plain-http issuers unless SSO_ALLOW_PRIVATE_ISSUERS is set', async () => {
    const strict = await startTestApp({ databaseUrl: t.config.databaseUrl });
    try {
      const res = await graphql(strict.url, save, { customerId: tree.childB.id, input: input() }, tree.childBCaller.token);
      expect(res.errors?.[0]).toMatchObject({ extensions: { code: 'invalid_request' }, message: 'issuer must be an https URL' });
      const tls = await graphql(
        strict.url,
        save,
        { customerId: tree.childB.id, input: { ...input(), issuer: 'https://127.0.0.1:9' } },
        tree.childBCaller.token,
      );
      expect(tls.errors?.[0].message).toMatch(
        /^issuer: The host 127\.0\.0\.1 resolves to a private, loopback or link-local address.*SSO_ALLOW_PRIVATE_ISSUERS/,
      );
    } finally {
      await strict.stop();
    }
  });

  it('signs a person in with the highest role their groups or email domain grant', async () => {
    expect(await (await signIn(tree.childA.id, 'alice')).person()).toMatchObject({
      customerId: tree.childA.id,
      email: 'alice@corp.example',
      role: 'admin',
      issuer: provider.issuer,
      subject: 'alice',
      returnTo: '/console/',
    });
    expect(await (await signIn(tree.childA.id, 'bob')).person()).toMatchObject({ email: 'bob@corp.example', role: 'viewer' });
  });

  it('refuses a person no rule names, an unverified email, a replayed or foreign callback', async () => {
    await expect((await signIn(tree.childA.id, 'mallory')).person()).rejects.toMatchObject({ code: 'sso_no_role', status: 403 });
    await expect((await signIn(tree.childA.id, 'unverified')).person()).rejects.toMatchObject({ code: 'sso_failed' });
    const { back, state, person } = await signIn(tree.childA.id, 'bob');
    // Another browser's state (a callback link planted on a victim) is refused before anything is spent.
    await expect(t.app.services.sso.finish(back.searchParams, 'another-browsers-state')).rejects.toMatchObject({ code: 'sso_failed' });
    await person();
    await expect(t.app.services.sso.finish(back.searchParams, state)).rejects.toMatchObject({
      code: 'sso_failed',
      message: 'This sign-in expired or was already used; start again',
    });
  });

  it('a tenant without a provider, or whose provider was removed, has no sign-in', async () => {
    await expect(t.app.services.sso.begin(tree.childB.id, '/console/')).rejects.toMatchObject({ code: 'sso_not_configured', status: 404 });
    const pending = await t.app.services.sso.begin(tree.childA.id, '/console/');
    expect((await graphql(t.url, remove, { customerId: tree.childA.id }, tree.childACaller.token)).data.deleteSsoConnection).toBe(true);
    const back = await signInAtProvider(pending.location, 'alice', `${t.url}/auth/sso/callback`);
    await expect(t.app.services.sso.finish(back.searchParams, pending.state)).rejects.toMatchObject({ code: 'sso_not_configured' });
    expect((await graphql(t.url, read, { customerId: tree.childA.id }, tree.childACaller.token)).data.ssoConnection).toBeNull();
  });
});
