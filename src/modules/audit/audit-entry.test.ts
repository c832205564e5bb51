import { describe, expect, it } from 'vitest';
import { TARGET_LIMITS, auditTarget, decodeAuditCursor, encodeAuditCursor, namedTenant } from './audit-entry.js';

describe('audit targets', () => {
  it('keeps ids and allow-listed values by path, never a secret-named argument, even one ending in Id', () => {
    const target = auditTarget({
      clientId: 'cli_1',
      clientSecret: 's3cret',
      password: 'hunter2',
      input: { customerId: 'cus_1', name: 'n', description: 'free text', sessionId: 'sess', totpCode: '123456', nodeIds: ['a', 'b'], services: { x: 1 } },
      userCode: 'ABCD-EFGH',
      enabled: true,
      networks: [{ cidr: '10.0.0.0/8' }],
    });
    expect(target).toEqual({ clientId: 'cli_1', 'input.customerId': 'cus_1', 'input.name': 'n', 'input.nodeIds': ['a', 'b'], enabled: true });
    expect(JSON.stringify(target)).not.toMatch(/s3cret|hunter2|sess|123456|ABCD/);
    expect(namedTenant(target)).toBe('cus_1');
  });

  it('stores odd text as text PostgreSQL takes', () => {
    expect(auditTarget({ name: 'a\ud800b', profileId: 'x\u0000', nodeIds: ['\udfff'] })).toEqual({
      name: 'a\ufffdb',
      profileId: 'x\ufffd',
      nodeIds: ['\ufffd'],
    });
  });

  it('bounds what one entry keeps', () => {
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`thing${i}Id`, 'x'.repeat(1000)]));
    const target = auditTarget({ ...many, listIds: Array.from({ length: 100 }, () => 'y') });
    expect(Object.keys(target)).toHaveLength(TARGET_LIMITS.keys);
    expect(Object.values(target).every((v) => typeof v === 'string' && v.length === TARGET_LIMITS.text)).toBe(true);
    const deep = auditTarget({ a: { b: { c: { dId: 'too deep' }, cId: 'kept' } }, listIds: Array.from({ length: 100 }, () => 'y') });
    expect(deep).toEqual({ 'a.b.cId': 'kept', listIds: Array(TARGET_LIMITS.listItems).fill('y') });
  });

  it('hands out cursors it reads back, and refuses others', () => {
    const at = new Date('2026-11-27T10:00:00.123Z');
    expect(decodeAuditCursor(encodeAuditCursor({ at, id: 42n }))).toEqual({ at, id: 42n });
    for (const bad of [
      '',
      'x',
      Buffer.from('audit:2026-13-01T00:00:00.000Z:1').toString('base64'),
      Buffer.from('audit:2026-11-27T10:00:00.123Z:-1').toString('base64'),
    ]) {
      expect(() => decodeAuditCursor(bad), bad).toThrow(/Invalid cursor/);
    }
  });
});
