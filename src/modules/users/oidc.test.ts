import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { graphql } from '../../../test/kit/http.js';
import { type TestOidcProvider, browseSignOn, startOidcProvider } from '../../../test/kit/oidc-provider.js';
import { asPerson, seedPerson, signedIn } from '../../../test/kit/people.js';
import { seedCaller, seedTenant } from '../../../test/kit/seed.js';
import { OIDC_CALLBACK_PATH } from './oidc.service.js';
import { roleFor } from './oidc.service.js';

const CONFIGURE = `mutation($c: String!, $i: SingleSignOnInput!) {
  configureSingleSignOn(customerId: $c, input: $i) { issuer clientId defaultRole startUrl roleRules { group emailDomain role } }
}`;
const ME = '{ me { email role customer { customerId } } }';

describe('single sign-on with OpenID Connect, against a real provider on loopback', () => {
  let t: TestApp;
  let idp: TestOidcProvider;
  let customerId: string;
  let adminCookie: string;
  let startUrl: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { OIDC_ALLOW_PRIVATE_ISSUERS: 'true' } });
    idp = await startOidcProvider(`${t.url}${OIDC_CALLBACK_PATH}`);
    customerId = (await seedTenant(t.app)).id;
    adminCookie = await signedIn(t.url, await seedPerson(t.app, customerId, 'admin'));
    const res = await asPerson(t.url, adminCookie, CONFIGURE, {
      c: customerId,
      i: {
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
        roleRules: [
          { group: 'soc-leads', role: 'admin' },
          { emailDomain: 'Analysts.Example.com', role: 'analyst' },
        ],
        defaultRole: null,
      },
    });
    expect(res.errors).toBeUndefined();
    startUrl = res.data.configureSingleSignOn.startUrl;
    expect(res.data.configureSingleSignOn).toMatchObject({
      issuer: `${idp.issuer}/`,
      startUrl: `${t.url}/auth/oidc/start?customer=${customerId}`,
      roleRules: [
        { group: 'soc-leads', emailDomain: null, role: 'admin' },
        { group: null, emailDomain: 'analysts.example.com', role: 'analyst' },
      ],
    });
  });
  afterAll(async () => {
    await t?.stop();
    await idp?.stop();
  });

  it('signs a new person on with code + PKCE, creates them with the role their email domain maps to, and sets the session cookie', async () => {
    idp.accounts.set('ana', { email: 'Ana@analysts.example.com' });
    const { final, cookies } = await browseSignOn(startUrl, idp.issuer, 'ana');
    expect(final.status).toBe(303);
    expect(final.headers.get('location')).toBe('/console/');
    expect(final.headers.getSetCookie()[0]).toMatch(/^bd_session=[A-Za-z0-9_-]{43}; HttpOnly; Path=\/; SameSite=Lax; Max-Age=43200$/);
    const me = await asPerson(t.url, `bd_session=${cookies.get('bd_session')}`, ME);
    expect(me.data.me).toEqual({ email: 'ana@analysts.example.com', role: 'analyst', customer: { customerId } });
    const event = await t.app.db.prisma.event.findFirstOrThrow({ where: { customerId, topic: 'sign_ins', kind: 'signed_in' }, orderBy: { createdAt: 'desc' } });
    expect(event.data).toMatchObject({ email: 'ana@analysts.example.com', method: 'oidc' });
  });

  it("gives a group's role before the domain's, and follows the provider's groups at each sign-on", async () => {
    idp.accounts.set('lead', { email: 'lead@analysts.example.com', groups: ['soc-leads'] });
    const first = await browseSignOn(startUrl, idp.issuer, 'lead');
    expect((await asPerson(t.url, `bd_session=${first.cookies.get('bd_session')}`, ME)).data.me.role).toBe('admin');
    idp.accounts.set('lead', { email: 'lead@analysts.example.com', groups: [] });
    const second = await browseSignOn(startUrl, idp.issuer, 'lead');
    expect((await asPerson(t.url, `bd_session=${second.cookies.get('bd_session')}`, ME)).data.me.role).toBe('analyst');
  });

  it("names a person by the sign-on's name claim while they have none; a name they set themself stays", async () => {
    const nameOf = async (cookies: Map<string, string>) => (await asPerson(t.url, `bd_session=${cookies.get('bd_session')}`, '{ me { name } }')).data.me.name;
    idp.accounts.set('nia', { email: 'nia@analysts.example.com', name: 'Nia Analyst' });
    const first = await browseSignOn(startUrl, idp.issuer, 'nia');
    expect(await nameOf(first.cookies)).toBe('Nia Analyst');
    await asPerson(t.url, `bd_session=${first.cookies.get('bd_session')}`, 'mutation { setMyName(name: "Nia") { name } }');
    idp.accounts.set('nia', { email: 'nia@analysts.example.com', name: 'N. Analyst' });
    expect(await nameOf((await browseSignOn(startUrl, idp.issuer, 'nia')).cookies)).toBe('Nia');

    // A claim we would refuse as a name is left out; the sign-on itself goes on.
    idp.accounts.set('odd', { email: 'odd@analysts.example.com', name: 'odd\u202ename' });
    expect(await nameOf((await browseSignOn(startUrl, idp.issuer, 'odd')).cookies)).toBeNull();
  });

  it('refuses a person no rule gives a role, an unverified email, and a replayed callback', async () => {
    idp.accounts.set('stranger', { email: 'someone@elsewhere.example' });
    const stranger = await browseSignOn(startUrl, idp.issuer, 'stranger');
    expect(stranger.final.status).toBe(403);
    expect(await stranger.final.text()).toContain('gives you no role here');
    expect(stranger.cookies.get('bd_session')).toBeUndefined();

    idp.accounts.set('unverified', { email: 'unverified@analysts.example.com', emailVerified: false });
    const unverified = await browseSignOn(startUrl, idp.issuer, 'unverified');
    expect(unverified.final.status).toBe(403);
    expect(await unverified.final.text()).toContain('no verified email');

    idp.accounts.set('twice', { email: 'twice@analysts.example.com' });
    const once = await browseSignOn(startUrl, idp.issuer, 'twice');
    expect(once.final.status).toBe(303);
    // The callback the provider sent the browser to, again, with the browser's state: taken the first time.
    const state = new URL(once.url).searchParams.get('state');
    const again = await fetch(once.url, { redirect: 'manual', headers: { cookie: `bd_oidc_state=${state}` } });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('unknown, used or expired');
  });

  it("refuses a callback in a browser that did not start the sign-on (an attacker's link)", async () => {
    idp.accounts.set('attacker', { email: 'attacker@analysts.example.com' });
    // The link to the callback an attacker's own sign-on ends with, planted on a victim's browser.
    const link = (await browseSignOn(startUrl, idp.issuer, 'attacker')).url;
    expect(new URL(link).pathname).toBe(OIDC_CALLBACK_PATH);
    const victim = await fetch(link, { redirect: 'manual' });
    expect(victim.status).toBe(400);
    expect(await victim.text()).toContain('not started in this browser');
    expect(victim.headers.getSetCookie().join()).not.toContain('bd_session');
    // The start set the state cookie: HttpOnly, only sent to the callback, gone after ten minutes.
    const started = await fetch(startUrl, { redirect: 'manual' });
    expect(started.headers.get('set-cookie')).toMatch(/^bd_oidc_state=[A-Za-z0-9_-]+; HttpOnly; Path=\/auth\/oidc\/callback; SameSite=Lax; Max-Age=600$/);
  });

  it('refuses private and loopback issuers unless OIDC_ALLOW_PRIVATE_ISSUERS is set', async () => {
    const strict = await startTestApp({ databaseUrl: t.config.databaseUrl });
    try {
      const admin = await signedIn(strict.url, await seedPerson(strict.app, customerId, 'admin'));
      const configure = (issuer: string) =>
        asPerson(strict.url, admin, CONFIGURE, { c: customerId, i: { issuer, clientId: 'x', clientSecret: 'y', roleRules: [] } });
      expect((await configure(idp.issuer)).errors?.[0]?.message).toBe('issuer must be an https URL');
      expect((await configure('https://10.1.2.3/realms/corp')).errors?.[0]?.message).toMatch(
        /^issuer: The host 10\.1\.2\.3 resolves to a private, loopback or link-local address; .*OIDC_ALLOW_PRIVATE_ISSUERS/,
      );
    } finally {
      await strict.stop();
    }
  });

  it('keeps the client secret out of every answer and sealed at rest; only admins read or change the settings', async () => {
    const read = await asPerson(t.url, adminCookie, 'query($c: String!) { singleSignOn(customerId: $c) { clientId issuer } }', { c: customerId });
    expect(read.data.singleSignOn.clientId).toBe(idp.clientId);
    expect(JSON.stringify(read)).not.toContain(idp.clientSecret);
    const row = await t.app.db.prisma.oidcProvider.findUniqueOrThrow({ where: { customerId } });
    expect(Buffer.from(row.clientSecretBox).toString('latin1')).not.toContain(idp.clientSecret);
    const analyst = await signedIn(t.url, await seedPerson(t.app, customerId, 'analyst'));
    const refused = await asPerson(t.url, analyst, 'query($c: String!) { singleSignOn(customerId: $c) { clientId } }', { c: customerId });
    expect(refused.errors?.[0]?.extensions?.details?.reason).toBe('insufficient_role');
    const badIssuer = await graphql(
      t.url,
      CONFIGURE,
      { c: customerId, i: { issuer: 'http://idp.example.com', clientId: 'x', clientSecret: 'y', roleRules: [] } },
      (await seedCaller(t.app, customerId)).token,
    );
    expect(badIssuer.errors?.[0]).toMatchObject({ message: 'issuer must be an https URL', extensions: { code: 'invalid_request' } });
    const noTenant = await fetch(`${t.url}/auth/oidc/start?customer=cus_nope`, { redirect: 'manual' });
    expect(noTenant.status).toBe(404);
  });

  it('maps claims to a role: first matching rule, else the default, else none', () => {
    const provider = {
      roleRules: [
        { group: 'g', role: 'admin' },
        { email_domain: 'a.example', role: 'viewer' },
      ],
      defaultRole: null,
    };
    expect(roleFor(provider as never, 'x@a.example', ['g'])).toBe('admin');
    expect(roleFor(provider as never, 'x@a.example', [])).toBe('viewer');
    expect(roleFor(provider as never, 'x@b.example', [])).toBeNull();
    expect(roleFor({ ...provider, defaultRole: 'analyst' } as never, 'x@b.example', [])).toBe('analyst');
  });
});
