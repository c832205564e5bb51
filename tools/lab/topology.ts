// The lab's network: namespaces, veth pairs and addresses. Office hosts hang off a bridge in the
// router's namespace (so the router sees their traffic among themselves as well as to the
// internet); the internet is one namespace holding every public service's address, on RFC 5737
// documentation ranges only; the breach-detection server has its own namespace behind a
// management link that carries no office or internet traffic.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { type Cleanup, run, runOk } from './proc.js';

export const OFFICE_SUBNET = '10.10.0.0/24';
export const ROUTER_LAN_IP = '10.10.0.1';
/** The router↔internet link, and the router's and the internet's ends of it. */
const WAN = { router: '192.0.2.1', inet: '192.0.2.2', prefix: 29 };
/** The management link: router ↔ breach-detection server. */
const MGMT = { router: '10.254.0.1', server: '10.254.0.2', prefix: 30 };
export const SERVER_IP = MGMT.server;
/** The bridge in the router's namespace the office hosts hang off: where the collectors capture. */
export const CAPTURE_IFACE = 'br0';

export type OfficeRole = 'workstation' | 'server';
export interface OfficeHost {
  name: string;
  ip: string;
  role: OfficeRole;
}

/** Office hosts: names that say what they are (the investigation's host context reads them). */
export const OFFICE_HOSTS: OfficeHost[] = [
  { name: 'ws1', ip: '10.10.0.11', role: 'workstation' },
  { name: 'ws2', ip: '10.10.0.12', role: 'workstation' },
  { name: 'ws3', ip: '10.10.0.13', role: 'workstation' },
  { name: 'ws4', ip: '10.10.0.14', role: 'workstation' },
  { name: 'fs1', ip: '10.10.0.20', role: 'server' },
];

/**
 * The internet's services, one address each, the names the internet's DNS gives them, and the
 * organization the tenant's own networks name each after (labNetworks).
 */
export const INTERNET = {
  dns: { ip: '192.0.2.53', organization: 'Lab DNS' },
  tunnelDns: '192.0.2.54',
  sites: [
    { name: 'www.news.example', ip: '198.51.100.10', organization: 'News Example' },
    { name: 'www.shop.example', ip: '198.51.100.20', organization: 'Shop Example' },
    { name: 'docs.wiki.example', ip: '198.51.100.30', organization: 'Wiki Example' },
  ],
  mirror: { name: 'mirror.dl.example', ip: '198.51.100.40', organization: 'Example Mirrors' },
  c2: { name: 'cdn.updates.example', ip: '203.0.113.80', organization: 'Updates CDN' },
  drop: { name: 'drop.files.example', ip: '203.0.113.66', organization: 'Files Drop' },
  tunnelDomain: 'tun.lab.example',
} as const;

/** Every web server's address and name (the sites, the mirror, the C2, the drop). */
export const webServers = () => [...INTERNET.sites, INTERNET.mirror, INTERNET.c2, INTERNET.drop];

/** The internet's documentation ranges (RFC 5737): the router routes them to the internet. */
export const INTERNET_RANGES = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'] as const;

/**
 * The tenant's own networks (docs/networks.md), as `cidr,name,kind` lines: the office is internal,
 * each service of the internet its organization, and the rest of the internet "Lab Internet"
 * (the most specific network names an address).
 */
export function labNetworks(): string {
  const lines = ['cidr,name,kind', `${OFFICE_SUBNET},Lab office,internal`];
  for (const range of INTERNET_RANGES) lines.push(`${range},Lab Internet,external`);
  for (const service of [INTERNET.dns, ...webServers()]) lines.push(`${service.ip}/32,${service.organization},external`);
  return `${lines.join('\n')}\n`;
}

export interface Namespaces {
  router: string;
  inet: string;
  server: string;
  hosts: Record<string, string>;
}

const PREFIX = /^bdlab(\d+)-/;

/**
 * Namespaces of labs whose process is gone (killed with SIGKILL, so it could not clean up): the
 * processes inside them are the lab's own daemons, killed by pid, then the namespaces deleted.
 */
export async function removeStaleLabs(log: (line: string) => void): Promise<void> {
  const list = await runOk(['ip', 'netns', 'list'], { timeoutMs: 10_000 });
  for (const name of list.split('\n').map((line) => line.split(' ')[0])) {
    const pid = PREFIX.exec(name)?.[1];
    if (!pid || isAlive(Number(pid))) continue;
    log(`removing ${name}, left by lab ${pid}, which is gone`);
    const pids = await runOk(['ip', 'netns', 'pids', name], { timeoutMs: 10_000 });
    for (const p of pids.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(p), 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    await runOk(['ip', 'netns', 'del', name], { timeoutMs: 10_000 });
    rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Names unique to this run: `bdlab<pid>-<role>`. */
export function namespaceNames(pid: number): Namespaces {
  const ns = (role: string) => `bdlab${pid}-${role}`;
  return { router: ns('router'), inet: ns('inet'), server: ns('server'), hosts: Object.fromEntries(OFFICE_HOSTS.map((h) => [h.name, ns(h.name)])) };
}

const ip = (ns: string, ...args: string[]) => runOk(['ip', '-n', ns, ...args], { timeoutMs: 10_000 });

async function addNamespace(name: string, cleanup: Cleanup): Promise<void> {
  await runOk(['ip', 'netns', 'add', name], { timeoutMs: 10_000 });
  cleanup.add(`delete namespace ${name}`, async () => {
    await runOk(['ip', 'netns', 'del', name], { timeoutMs: 10_000 });
    // `ip netns exec` bind-mounts /etc/netns/NAME/* over /etc: the lab's resolv.conf lives there.
    rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
  });
  await ip(name, 'link', 'set', 'lo', 'up');
  // IPv4 only: no router solicitations or listener reports in the capture.
  await runOk(['sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1', 'net.ipv6.conf.default.disable_ipv6=1'], { ns: name, timeoutMs: 10_000 });
}

/** A veth pair from `a` (named `aName`) to `b` (named `bName`), both up. */
async function link(a: string, aName: string, b: string, bName: string): Promise<void> {
  await runOk(['ip', 'link', 'add', aName, 'netns', a, 'type', 'veth', 'peer', 'name', bName, 'netns', b], { timeoutMs: 10_000 });
  await ip(a, 'link', 'set', aName, 'up');
  await ip(b, 'link', 'set', bName, 'up');
}

/** The namespace's resolver, as `ip netns exec` shows it to programs inside. */
function setResolver(ns: string, server: string): void {
  mkdirSync(`/etc/netns/${ns}`, { recursive: true });
  writeFileSync(`/etc/netns/${ns}/resolv.conf`, `nameserver ${server}\noptions timeout:2 attempts:2\n`);
}

export interface TopologyOptions {
  /** One-way delay added on each side of the internet link (tc netem), so it behaves like a WAN. */
  wanDelayMs: number;
}

/** Builds every namespace and link; each step is registered for removal as it is made. */
export async function buildTopology(names: Namespaces, options: TopologyOptions, cleanup: Cleanup): Promise<{ wanDelay: string }> {
  for (const ns of [names.router, names.inet, names.server, ...Object.values(names.hosts)]) await addNamespace(ns, cleanup);
  const r = names.router;
  await runOk(['ip', 'netns', 'exec', r, 'sysctl', '-qw', 'net.ipv4.ip_forward=1'], { timeoutMs: 10_000 });

  // Office: a bridge without MAC learning memory, so tcpdump on it (promiscuous) sees every frame
  // between office hosts too, each once.
  await ip(r, 'link', 'add', CAPTURE_IFACE, 'type', 'bridge', 'ageing_time', '0');
  await ip(r, 'link', 'set', CAPTURE_IFACE, 'up');
  await ip(r, 'addr', 'add', `${ROUTER_LAN_IP}/24`, 'dev', CAPTURE_IFACE);
  for (const host of OFFICE_HOSTS) {
    const ns = names.hosts[host.name];
    await link(ns, 'eth0', r, `p-${host.name}`);
    await ip(r, 'link', 'set', `p-${host.name}`, 'master', CAPTURE_IFACE);
    await ip(ns, 'addr', 'add', `${host.ip}/24`, 'dev', 'eth0');
    await ip(ns, 'route', 'add', 'default', 'via', ROUTER_LAN_IP);
    setResolver(ns, INTERNET.dns.ip);
  }

  // Internet: the router's uplink, and every public service's address on the internet's loopback.
  await link(r, 'wan0', names.inet, 'up0');
  await ip(r, 'addr', 'add', `${WAN.router}/${WAN.prefix}`, 'dev', 'wan0');
  await ip(names.inet, 'addr', 'add', `${WAN.inet}/${WAN.prefix}`, 'dev', 'up0');
  for (const range of INTERNET_RANGES) await ip(r, 'route', 'add', range, 'via', WAN.inet);
  await ip(names.inet, 'route', 'add', OFFICE_SUBNET, 'via', WAN.router);
  const publicAddresses = [INTERNET.dns.ip, INTERNET.tunnelDns, ...webServers().map((s) => s.ip)];
  for (const address of publicAddresses) await ip(names.inet, 'addr', 'add', `${address}/32`, 'dev', 'lo');
  setResolver(names.inet, INTERNET.dns.ip);
  const wanDelay =
    options.wanDelayMs > 0
      ? await delayWan(
          [
            [r, 'wan0'],
            [names.inet, 'up0'],
          ],
          options.wanDelayMs,
        )
      : 'off';

  // Management: the router reaches the server; nothing routes internet traffic there.
  await link(r, 'mgmt0', names.server, 'mgmt0');
  await ip(r, 'addr', 'add', `${MGMT.router}/${MGMT.prefix}`, 'dev', 'mgmt0');
  await ip(names.server, 'addr', 'add', `${MGMT.server}/${MGMT.prefix}`, 'dev', 'mgmt0');
  // The workstation sensor reports from the office, through the router, as an agent on a host would.
  await ip(names.server, 'route', 'add', OFFICE_SUBNET, 'via', MGMT.router);
  return { wanDelay };
}

/**
 * tc netem delay on each end of the internet link; a kernel without sch_netem (some containers)
 * keeps the link as it is, and the lab says so rather than fail.
 */
async function delayWan(ends: Array<[string, string]>, delayMs: number): Promise<string> {
  for (const [ns, dev] of ends) {
    // netem's default queue (1,000 packets) would drop a fast upload's burst: give it room.
    const result = await run(['tc', 'qdisc', 'add', 'dev', dev, 'root', 'netem', 'delay', `${delayMs}ms`, 'limit', '100000'], { ns, timeoutMs: 10_000 });
    if (result.code !== 0) return `off (tc netem: ${result.stderr.trim().split('\n')[0]})`;
  }
  return `${delayMs} ms each way`;
}
