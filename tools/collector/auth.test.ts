import { afterEach, describe, expect, it } from 'vitest';
import { CredentialRejected, TokenSource, decodeJwtPayload, splitAccessKey } from './auth.js';
import { createLogger } from './logring.js';
import { type FakeService, closedUrl, startFakeService } from './testing/fake-service.js';

const services: FakeService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});
const logger = createLogger({ write: null });

describe('access key and tokens', () => {
  it('splits the key at the first dot', () => {
    expect(splitAccessKey('cli_1.sec.ret')).toEqual({ clientId: 'cli_1', clientSecret: 'sec.ret' });
    expect(() => splitAccessKey('nodot')).toThrow(/<client_id>.<client_secret>/);
    expect(() => splitAccessKey('.secret')).toThrow();
    expect(() => splitAccessKey('id.')).toThrow();
  });

  it('caches the token, reads the tenant from aud, and re-mints before expiry', async () => {
    const service = await startFakeService({ tokenTtlS: 2, customerId: 'cust_42' });
    services.push(service);
    const tokens = new TokenSource({ baseUrl: service.url, accessKey: 'cid.secret', logger });
    const [a, b] = await Promise.all([tokens.token(), tokens.token()]);
    expect(a).toBe(b);
    expect(service.tokensIssued).toHaveLength(1); // concurrent callers share one request
    expect(tokens.customerId).toBe('cust_42');
    expect(decodeJwtPayload(a).aud).toBe('cust_42');
    // Lifetime 2 s: refreshed after half of it, before it expires.
    await new Promise((r) => setTimeout(r, 1_100));
    const c = await tokens.token();
    expect(c).not.toBe(a);
    expect(service.tokensIssued).toHaveLength(2);
    tokens.invalidate();
    await tokens.token();
    expect(service.tokensIssued).toHaveLength(3);
  });

  it('a refused key is CredentialRejected; an unreachable service is not', async () => {
    const service = await startFakeService({ keys: ['good.key'] });
    services.push(service);
    await expect(new TokenSource({ baseUrl: service.url, accessKey: 'bad.key', logger }).token()).rejects.toThrow(CredentialRejected);
    await expect(new TokenSource({ baseUrl: await closedUrl(), accessKey: 'good.key', logger }).token()).rejects.toThrow(/ECONNREFUSED/);
  });
});
