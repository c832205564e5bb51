import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../errors.js';
import { SealedValueError, SecretsKey } from '../../infra/secrets-key.js';
import { eventMatches, validateMatch } from './conditions.js';
import { retryDelay } from './runner.js';
import { TargetRefused, checkTarget, guardedLookup, isPublicAddress, parseTargetUrl } from './targets.js';
import { WebhookSecrets, generateWebhookSecret, signatureHeader } from './webhook-secrets.js';

describe('webhook targets', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a00:1',
    '2002:a00:1::',
    'ff02::1',
    'not-an-ip',
    // Every IPv6 spelling of a private or loopback IPv4 address, and the other non-public IPv6 ranges.
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:7f00:1',
    '::ffff:0:127.0.0.1',
    '::ffff:0:7f00:1',
    '::ffff:0:10.0.0.1',
    '::ffff:0:8.8.8.8',
    '::127.0.0.1',
    '::7f00:1',
    '::10.0.0.1',
    '64:ff9b::127.0.0.1',
    '64:ff9b:1::a00:1',
    '2002:7f00:1::1',
    '2001:0:4136:e378::1',
    'fec0::1',
    'fe80::1%eth0',
    '2606:4700:4700::1111%eth0',
    '100::1',
    '2001:db8::1',
    '3fff::1',
    '5f00::1',
    'ff05::2',
    '::ffff:0.0.0.0',
    '::ffff:a9fe:a9fe',
  ])('%s is not public', (address) => expect(isPublicAddress(address)).toBe(false));

  it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808', '172.32.0.1', '2a00:1450:4001::200e'])(
    '%s is public',
    (address) => expect(isPublicAddress(address)).toBe(true),
  );

  it('accepts absolute http(s) URLs only, without credentials', () => {
    expect(parseTargetUrl(' https://hooks.example.com/a?b=1#frag ').toString()).toBe('https://hooks.example.com/a?b=1');
    for (const bad of [
      'ftp://x.example.com/',
      'javascript:alert(1)',
      '/relative',
      'https://user:pw@x.example.com/',
      'nonsense',
      `https://x.example.com/${'a'.repeat(2100)}`,
    ]) {
      expect(() => parseTargetUrl(bad), bad).toThrow(DomainError);
    }
  });

  it('refuses hosts that resolve to any non-public address, unless allowed', async () => {
    const resolveTo = (addresses: string[]) => async () => addresses;
    await expect(checkTarget(new URL('http://a.example/'), false, resolveTo(['8.8.8.8']))).resolves.toBeUndefined();
    await expect(checkTarget(new URL('http://a.example/'), false, resolveTo(['8.8.8.8', '10.0.0.1']))).rejects.toThrow(TargetRefused);
    await expect(checkTarget(new URL('http://a.example/'), false, resolveTo([]))).rejects.toMatchObject({ code: 'target_unresolvable' });
    await expect(checkTarget(new URL('http://a.example/'), false, async () => Promise.reject(new Error('ENOTFOUND')))).rejects.toMatchObject({
      code: 'target_unresolvable',
    });
    await expect(checkTarget(new URL('http://[::1]:8080/'), false)).rejects.toMatchObject({ code: 'target_not_allowed' });
    await expect(checkTarget(new URL('http://127.0.0.1/'), true)).resolves.toBeUndefined();
  });

  it('refuses the connection itself when the name resolves to a private address (DNS rebinding)', async () => {
    const lookup = guardedLookup(false);
    const error = await new Promise((resolve) => lookup('localhost', { all: true }, (e) => resolve(e)));
    expect(error).toBeInstanceOf(TargetRefused);
    const allowed = await new Promise((resolve) => guardedLookup(true)('localhost', {}, (e, address) => resolve(e ?? address)));
    expect(allowed).toMatch(/^(127\.0\.0\.1|::1)$/);
  });
});

describe('rule matching', () => {
  const match = (conditions: unknown[], kinds: string[] = []) =>
    validateMatch({ topic: 'investigations', kinds, conditions: conditions as Array<{ field: string; op: string; value: unknown }> });
  const event = (data: unknown, kind = 'investigation_opened') => ({ topic: 'investigations', kind, data });

  it('matches topic, kinds and every condition on the data', () => {
    const rule = match(
      [
        { field: 'disposition', op: 'eq', value: 'malicious' },
        { field: 'confidence', op: 'gte', value: 0.8 },
      ],
      ['investigation_opened'],
    );
    expect(eventMatches(rule, event({ disposition: 'malicious', confidence: 0.9 }))).toBe(true);
    expect(eventMatches(rule, event({ disposition: 'malicious', confidence: 0.5 }))).toBe(false);
    expect(eventMatches(rule, event({ disposition: 'benign', confidence: 0.9 }))).toBe(false);
    expect(eventMatches(rule, event({ disposition: 'malicious', confidence: 0.9 }, 'investigation_closed'))).toBe(false);
    expect(eventMatches(rule, { ...event({ disposition: 'malicious', confidence: 0.9 }), topic: 'detections' })).toBe(false);
  });

  it.each([
    [{ field: 'a.b', op: 'eq', value: 1 }, { a: { b: 1 } }, true],
    [{ field: 'a.b', op: 'ne', value: 1 }, {}, true],
    [{ field: 'tags', op: 'contains', value: 'exfil' }, { tags: ['exfil', 'c2'] }, true],
    [{ field: 'headline', op: 'contains', value: 'DNS' }, { headline: 'DNS tunnel' }, true],
    [{ field: 'disposition', op: 'in', value: ['malicious', 'escalate'] }, { disposition: 'escalate' }, true],
    [{ field: 'disposition', op: 'not_in', value: ['benign'] }, { disposition: 'benign' }, false],
    [{ field: 'node_id', op: 'exists', value: true }, { node_id: null }, false],
    [{ field: 'node_id', op: 'exists', value: false }, {}, true],
    [{ field: 'n', op: 'lt', value: 3 }, { n: '1' }, false],
    [{ field: 'constructor', op: 'exists', value: true }, {}, false],
    [{ field: 'toString', op: 'exists', value: true }, {}, false],
  ])('%j on %j is %s', (condition, data, expected) => expect(eventMatches(match([condition]), event(data))).toBe(expected));

  it.each([
    [{}, /match.topic/],
    [{ topic: 'nope' }, /match.topic must be one of/],
    [{ topic: 'investigations', kinds: ['node_connected'] }, /not a kind of investigations/],
    [{ topic: 'investigations', conditions: [{ op: 'eq' }] }, /match.conditions\[0\].field/],
    [{ topic: 'investigations', conditions: [{ field: 'a', op: 'like' }] }, /op must be one of/],
    [{ topic: 'investigations', conditions: [{ field: 'a..b', op: 'eq', value: 1 }] }, /dotted path/],
    [{ topic: 'investigations', conditions: [{ field: 'a', op: 'gt', value: '3' }] }, /must be a number/],
    [{ topic: 'investigations', conditions: [{ field: 'a', op: 'in', value: [] }] }, /list of 1 to/],
    [{ topic: 'investigations', conditions: [{ field: 'a', op: 'eq', value: { x: 1 } }] }, /must be a string/],
    [{ topic: 'investigations', conditions: [{ field: 'a', op: 'exists', value: 'yes' }] }, /true or false/],
    [{ topic: 'investigations', conditions: Array.from({ length: 11 }, () => ({ field: 'a', op: 'exists', value: true })) }, /at most 10/],
  ])('refuses %j', (input, message) => {
    expect(() => validateMatch(input as never)).toThrow(message);
  });
});

describe('webhook secrets and signatures', () => {
  const secretsKey = SecretsKey.load({ secretsKeys: [randomBytes(32)], dataDir: '/nonexistent' }, { create: false });

  it('seals a secret under the secrets key so that only its rule opens it', () => {
    const secrets = new WebhookSecrets(secretsKey);
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const sealed = secrets.seal('rule_a', secret);
    expect(SecretsKey.sealedUnder(sealed)).toBe(secretsKey.currentId);
    expect(sealed.toString('utf8')).not.toContain(secret.slice(6));
    expect(secrets.open('rule_a', sealed)).toBe(secret);
    expect(() => secrets.open('rule_b', sealed)).toThrow(SealedValueError);
    const other = new WebhookSecrets(SecretsKey.load({ secretsKeys: [randomBytes(32)], dataDir: '/nonexistent' }, { create: false }));
    expect(() => other.open('rule_a', sealed)).toThrow(/sealed under secrets key [0-9a-f]{16}, which SECRETS_KEY does not hold/);
  });

  it('signs the timestamp and the body with HMAC-SHA256', () => {
    const header = signatureHeader('whsec_test', 1700000000, '{"a":1}');
    expect(header).toBe(`t=1700000000,v1=${createHmac('sha256', 'whsec_test').update('1700000000.{"a":1}').digest('hex')}`);
  });

  it('backs off exponentially with jitter, up to a cap', () => {
    const options = { retryBaseMs: 1000, maxDelayMs: 10_000 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(n, options, () => 0.5))).toEqual([1000, 2000, 4000, 8000, 10_000]);
    expect(retryDelay(1, options, () => 0)).toBe(800);
    expect(retryDelay(1, options, () => 1)).toBe(1200);
  });
});
