import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { SealedValueError, SecretsKey, keyFilePath } from './secrets-key.js';

describe('SECRETS_KEY', () => {
  it('takes one or two 32-byte base64 keys, standard or URL-safe', () => {
    const a = randomBytes(32);
    const b = randomBytes(32);
    expect(loadConfig({ SECRETS_KEY: a.toString('base64') }).secretsKeys).toEqual([a]);
    expect(loadConfig({ SECRETS_KEY: `${a.toString('base64url')}, ${b.toString('base64')}` }).secretsKeys).toEqual([a, b]);
    expect(loadConfig({}).secretsKeys).toEqual([]);
    expect(loadConfig({ SECRETS_KEY: ' ' }).secretsKeys).toEqual([]);
  });

  it.each([
    ['too short', randomBytes(16).toString('base64'), /SECRETS_KEY.*32 bytes in base64/],
    ['not base64', '!'.repeat(43), /SECRETS_KEY.*32 bytes in base64/],
    ['three keys', [1, 2, 3].map(() => randomBytes(32).toString('base64')).join(','), /SECRETS_KEY: at most two keys/],
  ])('refuses %s with the reason', (_name, value, message) => {
    expect(() => loadConfig({ SECRETS_KEY: value })).toThrow(ConfigError);
    expect(() => loadConfig({ SECRETS_KEY: value })).toThrow(message);
  });
});

describe('SecretsKey', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-kek-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('generates the key file once, 0600, for the server only', () => {
    const dataDir = join(dir, 'data');
    expect(() => SecretsKey.load({ secretsKeys: [], dataDir }, { create: false })).toThrow(
      /no secrets key: SECRETS_KEY is unset and .*secrets\.key does not exist/,
    );
    expect(existsSync(keyFilePath(dataDir))).toBe(false);
    const key = SecretsKey.load({ secretsKeys: [], dataDir }, { create: true });
    expect(statSync(keyFilePath(dataDir)).mode & 0o777).toBe(0o600);
    const text = readFileSync(keyFilePath(dataDir), 'utf8');
    expect(SecretsKey.load({ secretsKeys: [], dataDir }, { create: true }).currentId).toBe(key.currentId);
    expect(readFileSync(keyFilePath(dataDir), 'utf8')).toBe(text);
    chmodSync(keyFilePath(dataDir), 0o644);
    SecretsKey.load({ secretsKeys: [], dataDir }, { create: true });
    expect(statSync(keyFilePath(dataDir)).mode & 0o777).toBe(0o600);
  });

  it('opens only the value it sealed, in its own row, unaltered', () => {
    const key = SecretsKey.load({ secretsKeys: [randomBytes(32)], dataDir: dir }, { create: false });
    const sealed = key.seal('t:1', 'hello');
    expect(key.open('t:1', sealed)).toBe('hello');
    expect(() => key.open('t:2', sealed)).toThrow(/t:2 does not open under secrets key [0-9a-f]{16}: the stored value was altered/);
    const flipped = Buffer.from(sealed);
    flipped[flipped.length - 1] ^= 1;
    expect(() => key.open('t:1', flipped)).toThrow(SealedValueError);
    expect(() => key.open('t:1', Buffer.from('plain'))).toThrow(/t:1 is not a sealed value/);
  });

  it('opens with its second key, seals with its first', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const old = SecretsKey.load({ secretsKeys: [a], dataDir: dir }, { create: false });
    const both = SecretsKey.load({ secretsKeys: [b, a], dataDir: dir }, { create: false });
    expect(both.open('x', old.seal('x', 'v'))).toBe('v');
    expect(SecretsKey.sealedUnder(both.seal('x', 'v'))).not.toBe(old.currentId);
    expect(() => old.open('x', both.seal('x', 'v'))).toThrow(/which SECRETS_KEY does not hold/);
  });
});
