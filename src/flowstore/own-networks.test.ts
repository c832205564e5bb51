import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChdbEngine } from './chdb-engine.js';
import { formatIpv6, parseCidr, parseIp } from './ip.js';
import { insertFlowBatch } from './ingest.js';
import {
  MAX_INLINE_SEGMENTS,
  inlineEgressSql,
  ownFlowView,
  ownJoinSql,
  ownKindSql,
  ownNameSql,
  ownSegments,
  reclassifies,
  type OwnNetworkRange,
} from './own-networks.js';
import { migrateFlowStore } from './schema.js';
import { ParamBag, named } from './sql.js';

const net = (customerId: string, cidr: string, name: string, internal = false): OwnNetworkRange => ({ customerId, ...parseCidr(cidr)!, name, internal });
const text = (s: { lo: bigint; hi: bigint; name: string }) => `${formatIpv6(s.lo)}-${formatIpv6(s.hi)} ${s.name}`;

describe('own network segments', () => {
  it('cuts nested networks into disjoint segments, the most specific naming each', () => {
    const segments = ownSegments([
      net('a', '10.0.0.0/8', 'Corp'),
      net('a', '10.1.0.0/16', 'Lab'),
      net('a', '10.1.2.0/24', 'Rack'),
      net('a', '10.3.0.0/16', 'DC'),
    ]);
    const v4 = (s: string) => formatIpv6(parseIp(s)!);
    expect(segments.map(text)).toEqual([
      `${v4('10.0.0.0')}-${v4('10.0.255.255')} Corp`,
      `${v4('10.1.0.0')}-${v4('10.1.1.255')} Lab`,
      `${v4('10.1.2.0')}-${v4('10.1.2.255')} Rack`,
      `${v4('10.1.3.0')}-${v4('10.1.255.255')} Lab`,
      `${v4('10.2.0.0')}-${v4('10.2.255.255')} Corp`,
      `${v4('10.3.0.0')}-${v4('10.3.255.255')} DC`,
      `${v4('10.4.0.0')}-${v4('10.255.255.255')} Corp`,
    ]);
  });

  it('keeps tenants apart, and a network that starts where its parent does', () => {
    const segments = ownSegments([net('b', '192.0.2.0/24', 'B'), net('a', '192.0.2.0/24', 'A'), net('a', '192.0.2.0/25', 'A low')]);
    expect(segments.map((s) => `${s.customerId} ${s.name} ${s.hi - s.lo + 1n}`)).toEqual(['a A low 128', 'a A 128', 'b B 256']);
  });
});

describe('networks that change which flows are egress', () => {
  it('are internal ones outside the private ranges and external ones over them', () => {
    expect(reclassifies(net('a', '10.20.0.0/16', 'Lab', true))).toBe(false);
    expect(reclassifies(net('a', 'fd00::/8', 'ULA', true))).toBe(false);
    expect(reclassifies(net('a', '198.51.100.0/24', 'DMZ', true))).toBe(true);
    expect(reclassifies(net('a', '0.0.0.0/0', 'Everything', true))).toBe(true);
    expect(reclassifies(net('a', '198.51.100.0/24', 'Partner', false))).toBe(false);
    expect(reclassifies(net('a', '10.99.0.0/16', 'Lab Internet', false))).toBe(true);
    expect(reclassifies(net('a', '8.0.0.0/5', 'Wide', false))).toBe(true);
  });
});

describe('own networks joined in ClickHouse', () => {
  const dir = mkdtempSync(join(tmpdir(), 'own-networks-'));
  const engine = new ChdbEngine(dir);
  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("names each address by its tenant's most specific network, NULL outside them", async () => {
    const segments = ownSegments([
      net('a', '10.0.0.0/8', 'Corp', true),
      net('a', '10.1.0.0/16', 'Lab', true),
      net('a', '2001:db8::/32', 'Partner'),
      net('b', '10.0.0.0/8', 'Other'),
    ]);
    const p = new ParamBag();
    const rows = await engine.query<{ c: string; addr: string | null; name: string | null; kind: number }>(
      named(
        'flowstore:test.own_networks',
        `SELECT c, toString(ip) AS addr, ${ownNameSql('own', 'ip')} AS name, ${ownKindSql('own', 'ip')} AS kind FROM ` +
          `(SELECT arrayJoin(['a', 'b', 'c']) AS c, arrayJoin([toIPv6OrNull('10.1.2.3'), toIPv6OrNull('10.9.0.1'), toIPv6OrNull('2001:db8::1'), toIPv6OrNull('8.8.8.8'), NULL]) AS ip) AS f` +
          `${ownJoinSql(segments, p, 'own', 'f.c', 'f.ip')} ORDER BY c, addr`,
      ),
      p.values,
    );
    expect(rows.map((r) => `${r.c} ${r.addr} ${r.name} ${r.kind}`)).toEqual([
      'a 2001:db8::1 Partner 2',
      'a ::ffff:10.1.2.3 Lab 1',
      'a ::ffff:10.9.0.1 Corp 1',
      'a ::ffff:8.8.8.8 null 0',
      'a null null 0',
      'b 2001:db8::1 null 0',
      'b ::ffff:10.1.2.3 Other 2',
      'b ::ffff:10.9.0.1 Other 2',
      'b ::ffff:8.8.8.8 null 0',
      'b null null 0',
      ...['2001:db8::1', '::ffff:10.1.2.3', '::ffff:10.9.0.1', '::ffff:8.8.8.8', 'null'].map((ip) => `c ${ip} null 0`),
    ]);
  });

  it('classifies egress the same inline and joined, and joins past the inline limit', async () => {
    await migrateFlowStore(engine);
    const at = Date.now() - 3_600_000;
    const pairs = [
      ['10.0.0.5', '10.99.0.7'], // lab "internet" (external over private): egress
      ['10.0.0.5', '10.0.0.9'], // east-west: not
      ['198.18.5.5', '8.8.8.8'], // public branch (internal): egress
      ['10.0.0.6', '203.0.113.50'], // DMZ (internal over public): not
      ['10.0.0.6', '1.1.1.1'], // untouched egress
      ['10.99.0.7', '1.1.1.1'], // a lab "internet" host out: not
      ['10.20.1.1', '10.99.5.5'], // inside Corp's nested lab (internal) to the lab internet: egress
    ];
    const flows = pairs.map(([src, dst], i) => ({
      '@timestamp': at + i * 1000,
      src: { ip: src, port: 5000 + i },
      dst: { ip: dst, port: 443 },
      transport: { proto: 'TCP' },
    }));
    for (const c of ['a', 'b']) await insertFlowBatch(engine, { customerId: c, nodeId: 'n', batchId: `own-${c}`, flows });
    const segments = ownSegments([
      net('a', '10.99.0.0/16', 'Lab Internet'),
      net('a', '198.18.0.0/15', 'Branch', true),
      net('a', '203.0.113.0/24', 'DMZ', true),
      net('a', '10.0.0.0/8', 'Corp', true),
    ]);
    const egressOf = async (how: 'inline' | 'joined') => {
      const p = new ParamBag();
      const scope = `customer_id IN ${p.add(['a', 'b'], 'Array(String)')}`;
      const view = ownFlowView(segments, scope, p);
      const sql =
        how === 'inline'
          ? `SELECT customer_id, src_ip, dst_ip FROM flows WHERE ${scope} AND ${inlineEgressSql(segments, p)!} ORDER BY ALL`
          : `SELECT customer_id, src_ip, dst_ip FROM ${view.from} WHERE ${view.egress} ORDER BY ALL`;
      return (await engine.query<{ customer_id: string; src_ip: string; dst_ip: string }>(named(`flowstore:test.egress_${how}`, sql), p.values)).map(
        (r) => `${r.customer_id} ${r.src_ip}>${r.dst_ip}`,
      );
    };
    const expected = [
      'a 10.0.0.5>10.99.0.7',
      'a 10.0.0.6>1.1.1.1',
      'a 10.20.1.1>10.99.5.5',
      'a 198.18.5.5>8.8.8.8',
      'b 10.0.0.6>1.1.1.1',
      'b 10.0.0.6>203.0.113.50',
      'b 10.99.0.7>1.1.1.1',
    ];
    expect(await egressOf('inline')).toEqual(expected);
    expect(await egressOf('joined')).toEqual(expected);
    const many = ownSegments(Array.from({ length: MAX_INLINE_SEGMENTS + 1 }, (_, i) => net('a', `10.${100 + i}.0.0/16`, `Lab ${i}`)));
    expect(inlineEgressSql(many, new ParamBag())).toBeUndefined();
  });
});
