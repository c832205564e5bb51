// The index's bounds and matching rules, on rows as proc-net.ts reads them (the sampler's tests
// drive it with real sockets; these pin the order of forgetting and the time rule exactly).
import { describe, expect, it } from 'vitest';
import type { SocketRow } from './proc-net.js';
import { SocketIndex } from './socket-index.js';

const row = (inode: string, localPort: number, remotePort = 443, remoteIp = '203.0.113.5'): SocketRow => ({
  transport: 'TCP',
  localIp: '10.0.0.2',
  localPort,
  remoteIp: remotePort === 0 ? '0.0.0.0' : remoteIp,
  remotePort,
  unconnected: remotePort === 0,
  uid: 1000,
  inode,
});
const owner = (pid: number) => ({ name: `p${pid}`, pid });
const notHost = () => false;
const lookup = (index: SocketIndex, localPort: number, atMs: number, remotePort = 443) =>
  index.ownerOf('TCP', { ip: '10.0.0.2', port: localPort }, { ip: '203.0.113.5', port: remotePort }, atMs, atMs, 0, notHost)?.pid;

describe('SocketIndex', () => {
  it('forgets the longest closed socket first to make room, and refuses a new one when every socket is open', () => {
    const index = new SocketIndex(3, 60_000);
    for (const i of [1, 2, 3]) index.add(row(`${i}`, 40_000 + i), owner(i), 0, 0);
    index.sweep(new Set(['3']), 10); // 1 and 2 close, in that order
    index.add(row('4', 40_004), owner(4), 10, 10);
    expect(index.counts.evicted).toBe(1);
    expect(lookup(index, 40_001, 0)).toBeUndefined();
    expect(lookup(index, 40_002, 0)).toBe(2);
    index.add(row('5', 40_005), owner(5), 10, 10);
    index.add(row('6', 40_006), owner(6), 10, 10);
    expect(index.counts).toEqual({ evicted: 2, not_remembered: 1 });
    expect(index.size).toBe(3);
    expect(lookup(index, 40_006, 10)).toBeUndefined();
  });

  it('keeps a closed socket retainMs after it was last seen', () => {
    const index = new SocketIndex(10, 1000);
    index.add(row('1', 40_001), owner(1), 0, 100);
    index.sweep(new Set(), 200);
    expect(lookup(index, 40_001, 50)).toBe(1);
    index.sweep(new Set(), 1100);
    expect(lookup(index, 40_001, 50)).toBe(1);
    index.sweep(new Set(), 1101);
    expect(lookup(index, 40_001, 50)).toBeUndefined();
    expect(index.size).toBe(0);
  });

  it('names a socket only for flows while it lived (give or take the slack)', () => {
    const index = new SocketIndex(10, 60_000);
    index.add(row('1', 40_001), owner(1), 1000, 2000);
    const at = (startMs: number, endMs: number, slackMs: number) =>
      index.ownerOf('TCP', { ip: '10.0.0.2', port: 40_001 }, { ip: '203.0.113.5', port: 443 }, startMs, endMs, slackMs, notHost)?.pid;
    expect(at(1500, 1600, 0)).toBe(1);
    expect(at(500, 999, 0)).toBeUndefined();
    expect(at(500, 999, 10)).toBe(1);
    expect(at(2001, 2100, 0)).toBeUndefined();
    expect(at(2001, 2100, 10)).toBe(1);
  });

  it('gives a reused 5-tuple or inode to the newest socket, and re-keys a socket that connected', () => {
    const index = new SocketIndex(10, 60_000);
    index.add(row('1', 40_001), owner(1), 0, 0);
    index.sweep(new Set(), 10);
    index.add(row('2', 40_001), owner(2), 20, 20);
    expect(lookup(index, 40_001, 20)).toBe(2);
    index.add(row('1', 40_009), owner(9), 30, 30); // inode 1 reused
    expect(index.size).toBe(2);
    index.add(row('3', 5353, 0), owner(3), 30, 30);
    expect(index.ownerOf('TCP', { ip: '10.0.0.2', port: 5353 }, { ip: '198.51.100.1', port: 1 }, 30, 30, 0, notHost)?.pid).toBe(3);
    index.touch(row('3', 5353, 853), 40);
    expect(lookup(index, 5353, 40, 853)).toBe(3);
    expect(index.ownerOf('TCP', { ip: '10.0.0.2', port: 5353 }, { ip: '198.51.100.1', port: 1 }, 40, 40, 0, notHost)).toBeUndefined();
  });

  it('matches a wildcard listener only for the host’s own addresses', () => {
    const index = new SocketIndex(10, 60_000);
    index.add({ ...row('1', 22, 0), localIp: '::' }, owner(1), 0, 0);
    const to = (ip: string, isHost: (ip: string) => boolean) =>
      index.ownerOf('TCP', { ip, port: 22 }, { ip: '198.51.100.1', port: 50_000 }, 0, 0, 0, isHost)?.pid;
    expect(to('10.0.0.2', (ip) => ip === '10.0.0.2')).toBe(1);
    expect(to('fd00::2', (ip) => ip === 'fd00::2')).toBe(1);
    expect(to('10.0.0.3', (ip) => ip === '10.0.0.2')).toBeUndefined();
  });
});
