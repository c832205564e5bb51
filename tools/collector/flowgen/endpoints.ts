// Endpoints: the stable things flows connect. Built once per generator so a
// host keeps its address, name and processes for the whole run.

import { baseRttSecs, PLACES, type Place } from './catalog/places.js';
import type { OrgDef, RareOrg, ServiceDef } from './catalog/orgs.js';
import type { HostOs } from './catalog/traffic.js';
import { hashString } from './prng.js';
import { hostInCidr, ipToNumber, isPrivate, parseCidr } from './ip.js';

export interface Endpoint {
  ip: string;
  ipNum: number;
  addressType: 'private' | 'public';
  place: Place;
  /** Base round trip from the site, seconds. */
  rtt: number;
  /** Private: the subnet; public: unused. */
  locationNetwork?: string;
  asn?: number;
  asOrg?: string;
  asNetwork?: string;
  /** ctx.organization: who the service belongs to (not always the AS holder). */
  organization?: string;
  industry?: string;
  /** ctx.fqdn of an internal host (external flows use the service name instead). */
  fqdn?: string;
  vlan?: number;
}

export type HostRole =
  | 'workstation'
  | 'guest'
  | 'dc'
  | 'fileserver'
  | 'mail'
  | 'db'
  | 'build'
  | 'backup'
  | 'app'
  | 'web'
  | 'bastion';

export interface InternalHost extends Endpoint {
  hostname: string;
  role: HostRole;
  os: HostOs;
  /** Has a host agent, so flows carry the owning process. Guest devices do not. */
  managed: boolean;
  admin: boolean;
  /** Relative activity (some users are far busier than others). */
  activity: number;
  ephemeralLo: number;
  ephemeralHi: number;
  pids: Map<string, number>;
}

export function internalHost(
  fields: Omit<InternalHost, 'ipNum' | 'addressType' | 'rtt' | 'pids' | 'ephemeralLo' | 'ephemeralHi' | 'place'>,
  site: Place,
): InternalHost {
  // Windows and macOS use the IANA ephemeral range; Linux its own default.
  const linux = fields.os === 'linux';
  return {
    ...fields,
    place: site,
    ipNum: ipToNumber(fields.ip),
    addressType: 'private',
    rtt: 0.0004,
    ephemeralLo: linux ? 32768 : 49152,
    ephemeralHi: linux ? 60999 : 65535,
    pids: new Map(),
  };
}

/** A process keeps one pid per host for the whole run, as a long-lived program does. */
export function pidOf(host: InternalHost, processName: string): number {
  let pid = host.pids.get(processName);
  if (pid === undefined) {
    pid = processName === 'System' ? 4 : 300 + (hashString(`${host.ip}/${processName}`) % 30000) * 2;
    host.pids.set(processName, pid);
  }
  return pid;
}

function publicEndpoint(
  ip: string,
  network: string,
  org: { name: string; asn: number; asOrg?: string; industry: string },
  place: Place,
  site: Place,
): Endpoint {
  if (isPrivate(ip)) throw new Error(`catalog address ${ip} is private`);
  return {
    ip,
    ipNum: ipToNumber(ip),
    addressType: 'public',
    place,
    rtt: baseRttSecs(site, place),
    asn: org.asn,
    asOrg: org.asOrg ?? org.name,
    asNetwork: network,
    organization: org.name,
    industry: org.industry,
  };
}

/**
 * A handful of addresses per org: a real network reaches a limited set of each
 * provider's front ends, and explore's `endpoints` count should stay small.
 */
export function orgEndpoints(org: OrgDef | RareOrg, count: number, site: Place): Endpoint[] {
  const cidr = parseCidr(org.cidr);
  const place = PLACES[org.place];
  const endpoints: Endpoint[] = [];
  const seen = new Set<string>();
  for (let i = 0; endpoints.length < count && i < count * 4; i++) {
    const ip = hostInCidr(cidr, hashString(`${org.name}#${i}`));
    if (seen.has(ip)) continue;
    seen.add(ip);
    endpoints.push(publicEndpoint(ip, cidr.text, org, place, site));
  }
  return endpoints;
}

export function anycastEndpoints(org: OrgDef, anycast: NonNullable<ServiceDef['anycast']>, site: Place): Endpoint[] {
  return anycast.ips.map((ip) => publicEndpoint(ip, anycast.network, org, PLACES[org.place], site));
}
