import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCli } from '../../../test/kit/admin-cli.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call, graphql } from '../../../test/kit/http.js';
import { PASSWORD, type Person, SIGN_IN, asPerson, linkToken, seedPerson, signIn, signedIn } from '../../../test/kit/people.js';
import { seedCaller, seedTenant, seedTree } from '../../../test/kit/seed.js';
import { Scopes } from '../../auth/scopes.js';
import { createLogger } from '../../infra/logger.js';

const ME = '{ me { id email role status twoFactorEnabled customer { customerId } tenants { customerId } } }';
const USERS = 'query($c: String!) { users(customerId: $c) { id email role status } }';
const INVITE = 'mutation($i: UserInviteInput!) { inviteUser(input: $i) { user { id email role customer { customerId } } setPasswordLink { url expiresAt } } }';
const SET_PASSWORD = 'mutation($t: String!, $p: String!) { setPassword(token: $t, password: $p) }';
const MY_SESSIONS = '{ mySessions { id current address userAgent expiresAt idleExpiresAt } }';

/** Why a cookie no longer signs anybody in (`session_ended`), or undefined while it does. */
const endedReason = async (url: string, cookie: string): Promise<string | undefined> =>
  (await asPerson(url, cookie, '{ mySessions { id } }')).errors?.[0]?.extensions?.details?.reason;

describe('console users and sign-in', () => {
  let t: TestApp;
  let tree: Awaited<ReturnType<typeof seedTree>>;
  let admin: Person;

  beforeAll(async () => {
    t = await startTestApp();
    tree = await seedTree(t.app);
    admin = await seedPerson(t.app, tree.msp.id, 'admin');
  });
  afterAll(() => t?.stop());

  it('signs in with a cookie that is HttpOnly, SameSite=Lax, Path=/ and not Secure over http; me shows the person and their tenants', async () => {
    const res = await signIn(t.url, { email: admin.email.toUpperCase(), password: PASSWORD });
    expect(res.errors).toBeUndefined();
    expect(res.data.signIn).toEqual({ secondFactorRequired: false, user: { id: admin.userId, email: admin.email, role: 'admin' } });
    expect(res.setCookie).toMatch(/^bd_session=[A-Za-z0-9_-]{43}; HttpOnly; Path=\/; SameSite=Lax; Max-Age=43200$/);
    const me = await asPerson(t.url, res.cookie, ME);
    expect(me.data.me).toMatchObject({ id: admin.userId, role: 'admin', status: 'active', twoFactorEnabled: false, customer: { customerId: tree.msp.id } });
    expect(me.data.me.tenants.map((x: { customerId: string }) => x.customerId).sort()).toEqual([tree.msp.id, tree.childA.id, tree.childB.id].sort());
    // signIn's own answer names the person's tenants, though its session is not the request's yet.
    const full = await asPerson(
      t.url,
      undefined,
      'mutation($i: SignInInput!) { signIn(input: $i) { user { customer { customerId } tenants { customerId } } } }',
      {
        i: { email: admin.email, password: PASSWORD },
      },
    );
    expect(full.errors).toBeUndefined();
    expect(full.data.signIn.user.customer).toEqual({ customerId: tree.msp.id });
    expect(full.data.signIn.user.tenants).toHaveLength(3);
    // Without a session, or with a bearer token, `me` is null.
    expect((await asPerson(t.url, undefined, ME)).data.me).toBeNull();
    expect((await graphql(t.url, ME, {}, tree.mspCaller.token)).data.me).toBeNull();
  });

  it('gives a new session id at every sign-in and never adopts one the browser brought (session fixation)', async () => {
    const planted = `bd_session=${'A'.repeat(43)}`;
    const first = await signedIn(t.url, admin);
    const res = await asPerson(t.url, planted, SIGN_IN, { input: { email: admin.email, password: PASSWORD } });
    const second = res.headers.get('set-cookie')!.split(';')[0];
    expect(new Set([planted, first, second]).size).toBe(3);
    expect(await endedReason(t.url, planted)).toBe('session_ended');
    expect((await asPerson(t.url, second, ME)).data.me.id).toBe(admin.userId);
    // The first session is still its own, in force.
    expect((await asPerson(t.url, first, ME)).data.me.id).toBe(admin.userId);
  });

  it('refuses a cookie request without the CSRF header, and a sign-in without it; bearer requests need none', async () => {
    const cookie = await signedIn(t.url, admin);
    const forged = await asPerson(t.url, cookie, USERS, { c: tree.msp.id }, { csrf: false });
    expect(forged.errors?.[0]?.extensions?.code).toBe('csrf_header_required');
    expect(forged.status).toBe(403);
    expect(forged.errors?.[0]?.message).toContain('x-graphql-yoga-csrf');
    const signInForged = await asPerson(t.url, undefined, SIGN_IN, { input: { email: admin.email, password: PASSWORD } }, { csrf: false });
    expect(signInForged.errors?.[0]?.extensions?.code).toBe('csrf_header_required');
    expect(signInForged.headers.get('set-cookie')).toBeNull();
    const signOutForged = await asPerson(t.url, cookie, 'mutation { signOut }', {}, { csrf: false });
    expect(signOutForged.errors?.[0]?.extensions?.code).toBe('csrf_header_required');
    expect((await asPerson(t.url, cookie, ME)).data.me.id).toBe(admin.userId);
    expect((await graphql(t.url, USERS, { c: tree.msp.id }, tree.mspCaller.token)).errors).toBeUndefined();
  });

  it('keeps the REST paths bearer-only: a session cookie, even with the CSRF header, is no caller there', async () => {
    const cookie = await signedIn(t.url, admin);
    const res = await call(t.url, 'GET', '/rest/deployments/1.0', { headers: { cookie, 'x-graphql-yoga-csrf': '1' } });
    expect(res.status).toBe(401);
    expect((await call(t.url, 'GET', '/rest/deployments/1.0', { token: tree.mspCaller.token })).status).toBe(200);
  });

  it('answers a wrong password and an unknown email alike, never naming which', async () => {
    const wrong = await signIn(t.url, { email: admin.email, password: 'not the password at all' });
    const unknown = await signIn(t.url, { email: 'nobody@example.com', password: PASSWORD });
    for (const res of [wrong, unknown]) {
      expect(res.errors?.[0]).toMatchObject({ message: 'The email or password is wrong', extensions: { code: 'invalid_credentials' } });
      expect(res.setCookie).toBeNull();
    }
    await signedIn(t.url, admin); // a success resets the account's count of failures
  });

  it('lets an admin invite, list, change the role of, reset and disable users of the tree, not their own role or themself', async () => {
    const cookie = await signedIn(t.url, admin);
    const invited = await asPerson(t.url, cookie, INVITE, { i: { customerId: tree.childA.id, email: ' New.Analyst@Example.com ', role: 'analyst' } });
    expect(invited.errors).toBeUndefined();
    const { user, setPasswordLink } = invited.data.inviteUser;
    expect(user).toMatchObject({ email: 'new.analyst@example.com', role: 'analyst', customer: { customerId: tree.childA.id } });
    expect(new Date(setPasswordLink.expiresAt).getTime() - Date.now()).toBeGreaterThan(86_300_000);
    expect(setPasswordLink.url).toMatch(new RegExp(`^${t.url}/console/set-password#token=[A-Za-z0-9_-]{43}$`));

    const taken = await asPerson(t.url, cookie, INVITE, { i: { customerId: tree.childB.id, email: 'NEW.ANALYST@example.com', role: 'viewer' } });
    expect(taken.errors?.[0]?.extensions?.code).toBe('email_taken');
    expect(taken.status).toBe(409);

    const token = linkToken(setPasswordLink.url);
    expect((await asPerson(t.url, undefined, SET_PASSWORD, { t: token, p: 'short' })).errors?.[0]?.extensions?.code).toBe('invalid_request');
    expect((await asPerson(t.url, undefined, SET_PASSWORD, { t: token, p: 'a long enough password' })).data.setPassword).toBe(true);
    const again = await asPerson(t.url, undefined, SET_PASSWORD, { t: token, p: 'another long password' });
    expect(again.errors?.[0]?.extensions?.code).toBe('invalid_link');
    const analyst = { userId: user.id, customerId: tree.childA.id, email: user.email, password: 'a long enough password' };
    const analystCookie = await signedIn(t.url, analyst);

    const listed = await asPerson(t.url, cookie, USERS, { c: tree.childA.id });
    expect(listed.data.users).toEqual([{ id: user.id, email: user.email, role: 'analyst', status: 'active' }]);

    const promoted = await asPerson(t.url, cookie, 'mutation($u: String!) { changeUserRole(userId: $u, role: admin) { role } }', { u: user.id });
    expect(promoted.data.changeUserRole.role).toBe('admin');
    const own = await asPerson(t.url, cookie, 'mutation($u: String!) { changeUserRole(userId: $u, role: viewer) { role } }', { u: admin.userId });
    expect(own.errors?.[0]?.extensions).toMatchObject({ code: 'authorization_error', details: { reason: 'self' } });

    const reset = await asPerson(t.url, cookie, 'mutation($u: String!) { resetUserPassword(userId: $u) { setPasswordLink { url } } }', { u: user.id });
    await asPerson(t.url, undefined, SET_PASSWORD, { t: linkToken(reset.data.resetUserPassword.setPasswordLink.url), p: 'the reset password' });
    // Setting a password ends the person's sessions.
    expect(await endedReason(t.url, analystCookie)).toBe('session_ended');
    const afterReset = await signedIn(t.url, { ...analyst, password: 'the reset password' });

    const disabled = await asPerson(t.url, cookie, 'mutation($u: String!) { disableUser(userId: $u) { status } }', { u: user.id });
    expect(disabled.data.disableUser.status).toBe('disabled');
    expect(await endedReason(t.url, afterReset)).toBe('session_ended');
    const refused = await signIn(t.url, { email: user.email, password: 'the reset password' });
    expect(refused.errors?.[0]).toMatchObject({ extensions: { code: 'invalid_credentials' }, message: expect.stringContaining('disabled') });
    const self = await asPerson(t.url, cookie, 'mutation($u: String!) { disableUser(userId: $u) { status } }', { u: admin.userId });
    expect(self.errors?.[0]?.extensions?.details?.reason).toBe('self');
  });

  it("keeps a child's admin to the child: the MSP's users are not found", async () => {
    const childAdmin = await seedPerson(t.app, tree.childB.id, 'admin');
    const cookie = await signedIn(t.url, childAdmin);
    expect((await asPerson(t.url, cookie, USERS, { c: tree.msp.id })).errors?.[0]?.extensions?.code).toBe('not_found');
    const disable = await asPerson(t.url, cookie, 'mutation($u: String!) { disableUser(userId: $u) { status } }', { u: admin.userId });
    expect(disable.errors?.[0]?.extensions?.code).toBe('not_found');
    expect((await asPerson(t.url, cookie, USERS, { c: tree.childB.id })).data.users.map((u: { id: string }) => u.id)).toEqual([childAdmin.userId]);
  });

  it('refuses the user actions to viewers and analysts by role, and to API clients without node_api', async () => {
    for (const role of ['viewer', 'analyst'] as const) {
      const cookie = await signedIn(t.url, await seedPerson(t.app, tree.msp.id, role));
      const res = await asPerson(t.url, cookie, USERS, { c: tree.msp.id });
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'authorization_error', details: { reason: 'insufficient_role', required_role: 'admin' } });
      expect(res.errors?.[0]?.message).toBe(`This needs the admin role; yours is ${role}`);
    }
    const searchOnly = await seedCaller(t.app, tree.msp.id, [Scopes.searchApi]);
    const res = await graphql(t.url, USERS, { c: tree.msp.id }, searchOnly.token);
    expect(res.errors?.[0]?.extensions?.details).toMatchObject({ reason: 'insufficient_scope', required_scope: Scopes.nodeApi });
  });

  it('lists and revokes a person’s own sessions; admins those of their tree; others’ are not found for a viewer', async () => {
    const viewer = await seedPerson(t.app, tree.childA.id, 'viewer');
    const [laptop, phone] = [await signedIn(t.url, viewer), await signedIn(t.url, viewer)];
    const sessions = (await asPerson(t.url, laptop, MY_SESSIONS)).data.mySessions;
    expect(sessions).toHaveLength(2);
    expect(sessions.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ address: '127.0.0.1', userAgent: null });
    const phoneId = sessions.find((s: { current: boolean }) => !s.current).id;
    expect((await asPerson(t.url, laptop, 'mutation($id: String!) { revokeSession(id: $id) }', { id: phoneId })).data.revokeSession).toBe(true);
    expect(await endedReason(t.url, phone)).toBe('session_ended');
    expect((await asPerson(t.url, phone, ME)).data.me).toBeNull();

    const adminCookie = await signedIn(t.url, admin);
    const adminSessions = (await asPerson(t.url, adminCookie, MY_SESSIONS)).data.mySessions;
    const notTheirs = await asPerson(t.url, laptop, 'mutation($id: String!) { revokeSession(id: $id) }', { id: adminSessions[0].id });
    expect(notTheirs.errors?.[0]?.extensions?.code).toBe('not_found');
    const seen = await asPerson(t.url, adminCookie, 'query($u: String!) { userSessions(userId: $u) { id } }', { u: viewer.userId });
    expect(seen.data.userSessions).toHaveLength(1);
    const viewerSees = await asPerson(t.url, laptop, 'query($u: String!) { userSessions(userId: $u) { id } }', { u: admin.userId });
    expect(viewerSees.errors?.[0]?.extensions?.details?.reason).toBe('insufficient_role');
    await asPerson(t.url, adminCookie, 'mutation($id: String!) { revokeSession(id: $id) }', { id: seen.data.userSessions[0].id });
    expect(await endedReason(t.url, laptop)).toBe('session_ended');
  });

  it('signs out: the session ends, the cookie is cleared, and the event is recorded without secrets', async () => {
    const person = await seedPerson(t.app, tree.childB.id, 'analyst');
    await signIn(t.url, { email: person.email, password: 'wrong wrong wrong' });
    const cookie = await signedIn(t.url, person);
    const out = await asPerson(t.url, cookie, 'mutation { signOut }');
    expect(out.data.signOut).toBe(true);
    expect(out.headers.get('set-cookie')).toBe('bd_session=; HttpOnly; Path=/; SameSite=Lax; Max-Age=0');
    expect(await endedReason(t.url, cookie)).toBe('session_ended');
    const events = await t.app.db.prisma.event.findMany({
      where: { customerId: tree.childB.id, topic: 'sign_ins', subject: person.userId },
      orderBy: { createdAt: 'asc' },
    });
    expect(events.map((e) => [e.kind, e.subject])).toEqual([
      ['sign_in_failed', person.userId],
      ['signed_in', person.userId],
      ['signed_out', person.userId],
    ]);
    expect(events[0]!.data).toMatchObject({ reason: 'invalid_credentials', email: person.email, address: '127.0.0.1' });
    const stored = JSON.stringify([events, await t.app.db.prisma.userSession.findMany(), await t.app.db.prisma.user.findMany()], (_k, v) =>
      typeof v === 'bigint' ? String(v) : v,
    );
    for (const secret of [PASSWORD, 'wrong wrong wrong', cookie.split('=')[1]!]) expect(stored).not.toContain(secret);
  });

  it('names people: an admin inviting them, then they themselves; a bad name is refused, an empty one clears it', async () => {
    const cookie = await signedIn(t.url, admin);
    const NAMED = 'mutation($i: UserInviteInput!) { inviteUser(input: $i) { user { id name } } }';
    const invited = await asPerson(t.url, cookie, NAMED, {
      i: { customerId: tree.childB.id, email: 'named@example.com', role: 'viewer', name: '  Ana Lyst ' },
    });
    expect(invited.data.inviteUser.user.name).toBe('Ana Lyst');
    const refusedInvite = await asPerson(t.url, cookie, NAMED, {
      i: { customerId: tree.childB.id, email: 'bidi@example.com', role: 'viewer', name: 'evil\u202etxt' },
    });
    expect(refusedInvite.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_request', details: { field: 'name' } });
    expect(await t.app.db.prisma.user.count({ where: { email: 'bidi@example.com' } })).toBe(0);

    const person = await seedPerson(t.app, tree.childA.id, 'viewer');
    const own = await signedIn(t.url, person);
    const SET = 'mutation($n: String) { setMyName(name: $n) { id name } }';
    expect((await asPerson(t.url, own, '{ me { name } }')).data.me.name).toBeNull();
    expect((await asPerson(t.url, own, SET, { n: ' Vi Ewer ' })).data.setMyName).toEqual({ id: person.userId, name: 'Vi Ewer' });
    expect((await asPerson(t.url, own, '{ me { name } }')).data.me.name).toBe('Vi Ewer');
    for (const bad of ['x'.repeat(101), 'tab\there', 'zero\u200bwidth']) {
      const res = await asPerson(t.url, own, SET, { n: bad });
      expect(res.errors?.[0]?.extensions, bad).toMatchObject({ code: 'invalid_request', details: { field: 'name' } });
    }
    expect((await asPerson(t.url, own, SET, { n: 'x'.repeat(100) })).data.setMyName.name).toHaveLength(100);
    expect((await asPerson(t.url, own, SET, { n: '   ' })).data.setMyName.name).toBeNull();
    expect((await asPerson(t.url, own, SET, { n: 'Vi' })).data.setMyName.name).toBe('Vi');
    expect((await asPerson(t.url, own, SET, { n: null })).data.setMyName.name).toBeNull();
    // An admin sees it on the People list; an API client has no account to name.
    await asPerson(t.url, own, SET, { n: 'Vi Ewer' });
    const listed = await asPerson(t.url, cookie, 'query($c: String!) { users(customerId: $c) { id name } }', { c: tree.childA.id });
    expect(listed.data.users).toContainEqual({ id: person.userId, name: 'Vi Ewer' });
    expect((await graphql(t.url, SET, { n: 'bot' }, tree.mspCaller.token)).errors?.[0]?.extensions?.details?.reason).toBe('people_only');
  });

  it('lets a person change their own password (the current one asked again); their other sessions end', async () => {
    const person = await seedPerson(t.app, tree.childA.id, 'viewer');
    const [here, there] = [await signedIn(t.url, person), await signedIn(t.url, person)];
    const CHANGE = 'mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) }';
    const wrong = await asPerson(t.url, here, CHANGE, { c: 'not my password', n: 'a brand new password' });
    expect(wrong.errors?.[0]?.extensions?.code, JSON.stringify(wrong.errors)).toBe('invalid_credentials');
    expect((await asPerson(t.url, here, CHANGE, { c: PASSWORD, n: 'a brand new password' })).data.changePassword).toBe(true);
    expect((await asPerson(t.url, here, ME)).data.me.id).toBe(person.userId);
    expect(await endedReason(t.url, there)).toBe('session_ended');
    expect((await signIn(t.url, { email: person.email, password: PASSWORD })).errors?.[0]?.extensions?.code).toBe('invalid_credentials');
    await signedIn(t.url, { ...person, password: 'a brand new password' });
    // An API client has no account.
    const res = await graphql(t.url, CHANGE, { c: 'x', n: 'y' }, tree.mspCaller.token);
    expect(res.errors?.[0]?.extensions?.details?.reason).toBe('people_only');
  });
});

describe('secrets never reach the logs', () => {
  it('logs no password, session id or set-password token, at debug level, through invite, sign-in, failures and sign-out', async () => {
    const lines: string[] = [];
    const t = await startTestApp({ logger: createLogger('debug', {}, (line) => lines.push(line)) });
    try {
      const tenant = await seedTenant(t.app);
      const admin = await seedPerson(t.app, tenant.id, 'admin');
      const adminCookie = await signedIn(t.url, admin);
      const invited = await asPerson(t.url, adminCookie, INVITE, { i: { customerId: tenant.id, email: 'logged@example.com', role: 'viewer' } });
      const token = linkToken(invited.data.inviteUser.setPasswordLink.url);
      await asPerson(t.url, undefined, SET_PASSWORD, { t: token, p: 'the invited password' });
      await signIn(t.url, { email: 'logged@example.com', password: 'a wrong guess of it' });
      const cookie = await signedIn(t.url, { userId: '', customerId: tenant.id, email: 'logged@example.com', password: 'the invited password' });
      await asPerson(t.url, cookie, 'mutation { signOut }');
      expect(lines.length).toBeGreaterThan(5);
      const logged = lines.join('\n');
      for (const secret of [token, 'the invited password', 'a wrong guess of it', PASSWORD, cookie.split('=')[1]!, adminCookie.split('=')[1]!]) {
        expect(logged).not.toContain(secret);
      }
    } finally {
      await t.stop();
    }
  });
});

describe('the admin CLI: user create, list, disable, reset-password', () => {
  let t: TestApp;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestApp();
    env = { DATABASE_URL: t.config.databaseUrl!, LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'https://console.example.com' };
  });
  afterAll(() => t?.stop());

  it('creates a person with a one-time link, lists, resets and disables them', async () => {
    const tenant = await seedTenant(t.app);
    const created = await adminCli(['user', 'create', '--customer', tenant.id, '--email', 'Ops@Example.com', '--role', 'admin', '--name', 'Op Erator'], env);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toMatchObject({
      customer_id: tenant.id,
      email: 'ops@example.com',
      name: 'Op Erator',
      role: 'admin',
      status: 'active',
      two_factor_enabled: false,
    });
    expect(created.json.set_password_url).toMatch(/^https:\/\/console\.example\.com\/console\/set-password#token=[A-Za-z0-9_-]{43}$/);
    await t.app.services.users.setPassword(linkToken(created.json.set_password_url), PASSWORD);
    await signedIn(t.url, { userId: created.json.user_id, customerId: tenant.id, email: 'ops@example.com', password: PASSWORD });

    const listed = await adminCli(['user', 'list', '--customer', tenant.id], env);
    expect(listed.json).toEqual([expect.objectContaining({ user_id: created.json.user_id })]);
    expect(listed.stdout).not.toContain('password_hash');

    const reset = await adminCli(['user', 'reset-password', '--email', 'OPS@example.com'], env);
    expect(reset.json.set_password_url).not.toBe(created.json.set_password_url);
    const disabled = await adminCli(['user', 'disable', '--email', 'ops@example.com'], env);
    expect(disabled.json.status).toBe('disabled');

    const bad = await adminCli(['user', 'create', '--customer', tenant.id, '--email', 'x@example.com', '--role', 'root'], env);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toEqual({ error: 'invalid_request', message: 'role must be one of viewer, analyst, admin' });
    const missing = await adminCli(['user', 'create', '--customer', tenant.id, '--email', 'x@example.com'], env);
    expect(missing.code).toBe(2);
    expect((await adminCli(['user', 'disable', '--email', 'nobody@example.com'], env)).code).toBe(1);
  });
});
