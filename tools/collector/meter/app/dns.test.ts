import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDns } from './dns.js';
import { inspect } from './index.js';
import { freePort, packetWith, type Recording, runTool, startTool, stopTool, tcpRelay, udpRelay } from './testing/loopback.js';

let dir: string;
let dnsmasq: ChildProcess;
let dnsPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meter-dns-'));
  dnsPort = await freePort();
  dnsmasq = await startTool(
    'dnsmasq',
    [
      '--no-daemon',
      `--port=${dnsPort}`,
      '--listen-address=127.0.0.1',
      '--bind-interfaces',
      '--no-resolv',
      '--no-hosts',
      '--conf-file=/dev/null',
      `--pid-file=${join(dir, 'dnsmasq.pid')}`,
      '--log-facility=-',
      '--log-queries',
      '--local=/example.test/', // names under example.test that are not configured: NXDOMAIN
      '--host-record=www.example.test,192.0.2.10,2001:db8::10',
      '--cname=alias.example.test,www.example.test',
      '--txt-record=txt.example.test,hello',
    ],
    /started/,
  );
});

afterAll(async () => {
  if (dnsmasq) await stopTool(dnsmasq);
  rmSync(dir, { recursive: true, force: true });
});

/** Asks dnsmasq through a recording relay with dig; returns the query and the response as sent. */
async function lookup(name: string, type: string, overTcp = false): Promise<{ query: Buffer; response: Buffer }> {
  const relay: Recording = await (overTcp ? tcpRelay : udpRelay)(dnsPort);
  try {
    const run = await runTool('dig', ['@127.0.0.1', '-p', String(relay.port), name, type, '+tries=1', '+time=3', ...(overTcp ? ['+tcp'] : ['+ignore'])]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    return { query: Buffer.concat(relay.fromClient), response: Buffer.concat(relay.fromServer) };
  } finally {
    await relay.close();
  }
}

const udpQuery = (bytes: Uint8Array) => inspect(packetWith(bytes, { protocol: 17, srcPort: 40000, dstPort: 53 }), true);
const udpResponse = (bytes: Uint8Array) => inspect(packetWith(bytes, { protocol: 17, srcPort: 53, dstPort: 40000 }), false);

describe('DNS messages from dig and dnsmasq', () => {
  it('reads the question of a query, without rcode or answers', async () => {
    const { query } = await lookup('www.example.test', 'A');
    expect(udpQuery(query)).toEqual({ hints: { app_name: 'DNS', dns: { rrname: 'www.example.test', rrtype: 'A' } } });
  });

  it('reads A and AAAA answers', async () => {
    const a = await lookup('www.example.test', 'A');
    expect(udpResponse(a.response).hints?.dns).toEqual({ rrname: 'www.example.test', rrtype: 'A', rcode: 'NOERROR', answers: ['192.0.2.10'] });
    const aaaa = await lookup('www.example.test', 'AAAA');
    expect(udpResponse(aaaa.response).hints?.dns).toEqual({ rrname: 'www.example.test', rrtype: 'AAAA', rcode: 'NOERROR', answers: ['2001:db8::10'] });
  });

  it('follows a CNAME to its target and address (names compressed by dnsmasq)', async () => {
    const { response } = await lookup('alias.example.test', 'A');
    expect(udpResponse(response)).toEqual({
      hints: { app_name: 'DNS', dns: { rrname: 'alias.example.test', rrtype: 'A', rcode: 'NOERROR', answers: ['www.example.test', '192.0.2.10'] } },
    });
  });

  it('names NXDOMAIN and record types without answers shown', async () => {
    const missing = await lookup('missing.example.test', 'A');
    expect(udpResponse(missing.response).hints?.dns).toEqual({ rrname: 'missing.example.test', rrtype: 'A', rcode: 'NXDOMAIN' });
    const txt = await lookup('txt.example.test', 'TXT');
    expect(udpResponse(txt.response).hints?.dns).toEqual({ rrname: 'txt.example.test', rrtype: 'TXT', rcode: 'NOERROR' });
  });

  it('names REFUSED (dnsmasq has no upstream for other domains)', async () => {
    const { response } = await lookup('elsewhere.example.org', 'A');
    expect(udpResponse(response).hints?.dns).toEqual({ rrname: 'elsewhere.example.org', rrtype: 'A', rcode: 'REFUSED' });
  });

  it('spells the types dig asks for as flowgen does', async () => {
    for (const type of ['NS', 'CNAME', 'SOA', 'PTR', 'MX', 'TXT', 'SRV', 'HTTPS', 'CAA']) {
      const { query } = await lookup('www.example.test', type);
      expect(udpQuery(query).hints?.dns?.rrtype).toBe(type);
    }
    expect(udpQuery((await lookup('www.example.test', 'TYPE4000')).query).hints?.dns?.rrtype).toBe('TYPE4000');
    // dig 9.18 asks for ANY over TCP only (nothing reaches a UDP relay), so it is relayed over TCP.
    const any = await lookup('www.example.test', 'ANY', true);
    expect(inspect(packetWith(any.query, { protocol: 6, srcPort: 40000, dstPort: 53 }), true).hints?.dns?.rrtype).toBe('ANY');
  });

  it('reads DNS over TCP behind its length prefix', async () => {
    const { query, response } = await lookup('www.example.test', 'AAAA', true);
    const tcp = (bytes: Buffer, fromInitiator: boolean) =>
      inspect(packetWith(bytes, { protocol: 6, srcPort: fromInitiator ? 40000 : 53, dstPort: fromInitiator ? 53 : 40000 }), fromInitiator);
    expect(tcp(query, true).hints?.dns).toEqual({ rrname: 'www.example.test', rrtype: 'AAAA' });
    expect(tcp(response, false).hints?.dns?.answers).toEqual(['2001:db8::10']);
  });
});

describe('hostile DNS', () => {
  /** A header, then the given bytes. */
  const message = (flags: number, counts: [number, number], body: number[]) =>
    Uint8Array.from([0x12, 0x34, flags >> 8, flags & 0xff, 0, counts[0], counts[1] >> 8, counts[1] & 0xff, 0, 0, 0, 0, ...body]);

  it('refuses a compression pointer to itself, forward, or in a loop', () => {
    expect(inspectDns(message(0x0100, [1, 0], [0xc0, 12, 0, 1, 0, 1]), false).problem).toBe('dns.bad_name');
    expect(inspectDns(message(0x0100, [1, 0], [0xc0, 14, 0, 1, 0, 1]), false).problem).toBe('dns.bad_name');
    // The question "a" at 12; an answer whose name is "b" then a pointer back into itself.
    const loop = message(0x8180, [1, 1], [1, 0x61, 0, 0, 1, 0, 1, 1, 0x62, 0xc0, 19, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4]);
    expect(inspectDns(loop, false)).toEqual({ hints: { app_name: 'DNS', dns: { rrname: 'a', rrtype: 'A', rcode: 'NOERROR' } }, problem: 'dns.bad_name' });
  });

  it('stops at the bytes, not at a huge answer count', () => {
    const huge = message(0x8180, [1, 0xffff], [1, 0x61, 0, 0, 1, 0, 1, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 10, 0, 0, 1]);
    expect(inspectDns(huge, false)).toEqual({
      hints: { app_name: 'DNS', dns: { rrname: 'a', rrtype: 'A', rcode: 'NOERROR', answers: ['10.0.0.1'] } },
      problem: 'dns.truncated',
    });
  });

  it('escapes label bytes that are not printable, as dig does', () => {
    const odd = message(0x0100, [1, 0], [3, 0x61, 0x2e, 0x00, 0, 0, 16, 0, 1]);
    expect(inspectDns(odd, false).hints?.dns).toEqual({ rrname: 'a\\046\\000', rrtype: 'TXT' });
  });

  it('never throws on any truncation of real messages, and keeps the question once it is whole', async () => {
    const { query, response } = await lookup('alias.example.test', 'A');
    for (const bytes of [query, response]) {
      for (let end = 0; end <= bytes.length; end++) {
        const result = udpResponse(bytes.subarray(0, end));
        if (end >= 12 + 20 + 4) expect(result.hints?.dns?.rrname).toBe('alias.example.test');
        else if (end > 0) expect(result.problem).toBe('dns.truncated');
      }
    }
  });
});
