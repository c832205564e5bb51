import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { PASSWORD, type Person, asPerson, seedPerson, signIn, signedIn } from '../../../test/kit/people.js';
import { seedTenant } from '../../../test/kit/seed.js';
import { UNAUTHORIZED_CLOSE } from '../../graphql/socket-sessions.js';
import { base32Decode, hotp, totpStep } from './totp.js';

/** Why a cookie no longer signs anybody in (`session_ended`), or undefined while it does. */
const endedReason = async (url: string, cookie: string): Promise<string | undefined> =>
  (await asPerson(url, cookie, '{ mySessions { id } }')).errors?.[0]?.extensions?.details?.reason;

/** Short lives, so that ends can be watched: idle 2 s, absolute 4 s, 3 failures lock for 2 s. */
const SHORT = { SESSION_IDLE_SECONDS: '2', SESSION_MAX_SECONDS: '4', SIGN_IN_MAX_FAILURES: '3', SIGN_IN_LOCKOUT_SECONDS: '2' };

describe('sessions that end, lockout, and the second factor', () => {
  let t: TestApp;
  let customerId: string;
  let person: Person;

  beforeAll(async () => {
    t = await startTestApp({ env: SHORT });
    customerId = (await seedTenant(t.app)).id;
    person = await seedPerson(t.app, customerId, 'analyst');
  });
  afterAll(() => t?.stop());

  it('ends a session left unused for the idle period', async () => {
    const cookie = await signedIn(t.url, person);
    expect(await endedReason(t.url, cookie)).toBeUndefined();
    await sleep(2300);
    expect(await endedReason(t.url, cookie)).toBe('session_ended');
  });

  it('ends a session in use at its absolute end', async () => {
    const cookie = await signedIn(t.url, person);
    const started = Date.now();
    // Used every 0.6 s, past the 2 s idle period, until the 4 s absolute end.
    while (Date.now() - started < 3500) {
      expect(await endedReason(t.url, cookie)).toBeUndefined();
      await sleep(600);
    }
    await sleep(Math.max(0, started + 4200 - Date.now()));
    expect(await endedReason(t.url, cookie)).toBe('session_ended');
  });

  it('locks an account after 3 failures in a row, saying until when, even for the right password; then lets it in', async () => {
    const victim = await seedPerson(t.app, customerId, 'viewer');
    for (const attempt of [1, 2]) {
      const res = await signIn(t.url, { email: victim.email, password: `guess number ${attempt}` });
      expect(res.errors?.[0]?.extensions?.code).toBe('invalid_credentials');
    }
    const third = await signIn(t.url, { email: victim.email, password: 'guess number 3' });
    expect(third.status).toBe(429);
    expect(third.errors?.[0]?.extensions?.code).toBe('too_many_attempts');
    expect(third.errors?.[0]?.message).toMatch(/^Too many failed sign-ins for this account; try again after \d\d:\d\d UTC \(in 1 min\)$/);
    const right = await signIn(t.url, { email: victim.email, password: PASSWORD });
    expect(right.errors?.[0]?.extensions?.code).toBe('too_many_attempts');
    expect(right.setCookie).toBeNull();
    await sleep(2100);
    expect((await signIn(t.url, { email: victim.email, password: PASSWORD })).cookie).toBeDefined();
    const events = await t.app.db.prisma.event.findMany({ where: { subject: victim.userId, topic: 'sign_ins' }, orderBy: { createdAt: 'asc' } });
    expect(events.map((e) => [e.kind, (e.data as { reason?: string }).reason])).toEqual([
      ['sign_in_failed', 'invalid_credentials'],
      ['sign_in_failed', 'invalid_credentials'],
      ['sign_in_failed', 'invalid_credentials'],
      ['sign_in_failed', 'locked'],
      ['signed_in', undefined],
    ]);
  });

  it('counts a wrong current password (changing it, turning TOTP off) towards the lock: a stolen session cannot guess it without limit', async () => {
    const victim = await seedPerson(t.app, customerId, 'viewer');
    const cookie = await signedIn(t.url, victim);
    const CHANGE = 'mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) }';
    for (const guess of ['first wrong guess', 'second wrong guess']) {
      expect((await asPerson(t.url, cookie, CHANGE, { c: guess, n: 'a new password of mine' })).errors?.[0]?.extensions?.code).toBe('invalid_credentials');
    }
    const third = await asPerson(t.url, cookie, 'mutation($p: String!) { disableTotp(password: $p) }', { p: 'third wrong guess' });
    expect(third.errors?.[0]?.extensions?.code).toBe('too_many_attempts');
    const right = await asPerson(t.url, cookie, CHANGE, { c: PASSWORD, n: 'a new password of mine' });
    expect(right.errors?.[0]?.extensions?.code).toBe('too_many_attempts');
    expect((await signIn(t.url, { email: victim.email, password: PASSWORD })).errors?.[0]?.extensions?.code).toBe('too_many_attempts');
    await sleep(2100);
  });

  describe('over graphql-ws, with the cookie of the upgrade', () => {
    const sockets: Array<{ dispose(): void }> = [];
    afterAll(() => sockets.forEach((s) => s.dispose()));

    /** A subscription to the tenant's events over a socket whose upgrade carries `cookie` (and `origin`). */
    const watch = (cookie: string, origin?: string) => {
      const headers = { cookie, ...(origin && { origin }) };
      const closes: number[] = [];
      const seen: unknown[] = [];
      const client = createClient({
        url: t.url.replace(/^http/, 'ws') + '/graphql',
        webSocketImpl: class extends WebSocket {
          constructor(url: string, protocols?: string | string[]) {
            super(url, protocols, { headers });
          }
        },
        retryAttempts: 0,
        on: { closed: (event) => closes.push((event as { code: number }).code) },
      });
      sockets.push(client);
      client.subscribe(
        { query: 'subscription($c: String!) { events(customerId: $c, topic: "sign_ins") { kind } }', variables: { c: customerId } },
        {
          next: (msg) => seen.push(msg.errors?.[0]?.extensions?.code ?? (msg.data as any)?.events?.kind),
          error: (e) => seen.push(String(e)),
          complete: () => undefined,
        },
      );
      return { closes, seen };
    };

    it('streams to a session, and closes (4401) when the session is revoked', async () => {
      const cookie = await signedIn(t.url, person);
      const socket = watch(cookie);
      await expect.poll(async () => (await signedIn(t.url, person)) && socket.seen.length, { timeout: 3000 }).toBeGreaterThan(0);
      expect(socket.seen[0]).toBe('signed_in');
      const [other] = (await asPerson(t.url, cookie, '{ mySessions { id current } }')).data.mySessions.filter((s: { current: boolean }) => s.current);
      const admin = await signedIn(t.url, await seedPerson(t.app, customerId, 'admin'));
      await asPerson(t.url, admin, 'mutation($id: String!) { revokeSession(id: $id) }', { id: other.id });
      await expect.poll(() => socket.closes).toEqual([UNAUTHORIZED_CLOSE]);
    });

    it('closes (4401) at the idle end of a session nothing else uses', async () => {
      const socket = watch(await signedIn(t.url, person));
      await sleep(500);
      expect(socket.closes).toEqual([]);
      await expect.poll(() => socket.closes, { timeout: 3000 }).toEqual([UNAUTHORIZED_CLOSE]);
    });

    it('refuses the cookie of an upgrade from another origin (a WebSocket cannot carry the CSRF header)', async () => {
      const socket = watch(await signedIn(t.url, person), 'https://evil.example');
      await expect.poll(() => socket.seen).toEqual(['csrf_header_required']);
      const sameOrigin = watch(await signedIn(t.url, person), t.url);
      await expect.poll(async () => (await signedIn(t.url, person)) && sameOrigin.seen, { timeout: 3000 }).toContain('signed_in');
    });
  });

  it('turns a TOTP second factor on with a confirmed code, asks for it at sign-in, and takes each code and recovery code once', async () => {
    const owner = await seedPerson(t.app, customerId, 'viewer');
    let cookie = await signedIn(t.url, owner);
    const started = await asPerson(t.url, cookie, 'mutation { startTotpEnrolment { secret otpauthUri } }');
    const { secret, otpauthUri } = started.data.startTotpEnrolment;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauthUri).toBe(
      `otpauth://totp/Breach%20Detection%3A${encodeURIComponent(owner.email)}?secret=${secret}&issuer=Breach%20Detection&algorithm=SHA1&digits=6&period=30`,
    );
    const code = (offset = 0n) => hotp(base32Decode(secret), totpStep(Date.now()) + offset);
    const CONFIRM = 'mutation($c: String!) { confirmTotpEnrolment(code: $c) }';
    expect((await asPerson(t.url, cookie, CONFIRM, { c: code(5n) })).errors?.[0]?.extensions?.code).toBe('invalid_credentials');
    const codes: string[] = (await asPerson(t.url, cookie, CONFIRM, { c: code() })).data.confirmTotpEnrolment;
    expect(codes).toHaveLength(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    expect((await asPerson(t.url, cookie, '{ me { twoFactorEnabled } }')).data.me.twoFactorEnabled).toBe(true);

    const passwordOnly = await signIn(t.url, { email: owner.email, password: PASSWORD });
    expect(passwordOnly.data.signIn).toEqual({ secondFactorRequired: true, user: null });
    expect(passwordOnly.setCookie).toBeNull();
    const wrong = await signIn(t.url, { email: owner.email, password: PASSWORD, totpCode: '000000' === code(1n) ? '111111' : '000000' });
    expect(wrong.errors?.[0]).toMatchObject({ message: 'The code is wrong or was already used', extensions: { code: 'invalid_credentials' } });
    // The step the enrolment used is spent; the next one is within the accepted drift.
    const next = code(1n);
    expect((await signIn(t.url, { email: owner.email, password: PASSWORD, totpCode: next })).cookie).toBeDefined();
    expect((await signIn(t.url, { email: owner.email, password: PASSWORD, totpCode: next })).errors?.[0]?.extensions?.code).toBe('invalid_credentials');
    const recovery = codes[3]!.toUpperCase().replace('-', '');
    cookie = (await signIn(t.url, { email: owner.email, password: PASSWORD, recoveryCode: recovery })).cookie!;
    expect(cookie).toBeDefined();
    expect((await signIn(t.url, { email: owner.email, password: PASSWORD, recoveryCode: codes[3]! })).errors?.[0]?.extensions?.code).toBe(
      'invalid_credentials',
    );

    const stored = await t.app.db.prisma.user.findUniqueOrThrow({ where: { id: owner.userId } });
    expect(Buffer.from(stored.totpBox!).toString('latin1')).not.toContain(secret);
    const OFF = 'mutation($p: String!) { disableTotp(password: $p) }';
    expect((await asPerson(t.url, cookie, OFF, { p: 'not the password' })).errors?.[0]?.extensions?.code).toBe('invalid_credentials');
    expect((await asPerson(t.url, cookie, OFF, { p: PASSWORD })).data.disableTotp).toBe(true);
    expect((await signIn(t.url, { email: owner.email, password: PASSWORD })).cookie).toBeDefined();
  });
});

describe('sign-in attempts per address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_SIGN_IN_PER_ADDRESS: '3' } });
  });
  afterAll(() => t?.stop());

  it('refuses the 4th attempt of a window from one address, for any account, saying when to try again', async () => {
    const person = await seedPerson(t.app, (await seedTenant(t.app)).id, 'viewer');
    for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) {
      expect((await signIn(t.url, { email, password: PASSWORD })).errors?.[0]?.extensions?.code).toBe('invalid_credentials');
    }
    const refused = await signIn(t.url, { email: person.email, password: PASSWORD });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.errors?.[0]).toMatchObject({ extensions: { code: 'too_many_attempts' } });
    expect(refused.errors?.[0]?.message).toMatch(/^Too many sign-in attempts from this address; try again after \d\d:\d\d UTC \(in 1 min\)$/);
  });
});
