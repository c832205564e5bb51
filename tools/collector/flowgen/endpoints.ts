// Endpoints: the stable things flows connect. Built once per generator so a
// host keeps its address, name and processes for the whole run.

import { baseRttSecs, PLACES, type Place } from './catalog/places.js';
import type { OrgDef, RareOrg, ServiceDef } from './catalog/orgs.js';
import type { HostOs } from './catalog/traffic.js';
import { hashString, mix32 } from './prng.js';
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

export type HostRole = 'workstation' | 'guest' | 'dc' | 'fileserver' | 'mail' | 'db' | 'build' | 'backup' | 'app' | 'web' | 'bastion';

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
}

type EndpointFields = Omit<Endpoint, 'ipNum'>;

/**
 * Every endpoint gets every field, in one order, so they all share one hidden
 * class: the record builder reads endpoints on every flow, and polymorphic
 * property access there costs a large share of throughput.
 */
function endpoint(f: EndpointFields): Endpoint {
  const shared: Endpoint & Omit<InternalHost, keyof Endpoint> = {
    ip: f.ip,
    ipNum: ipToNumber(f.ip),
    addressType: f.addressType,
    place: f.place,
    rtt: f.rtt,
    locationNetwork: f.locationNetwork,
    asn: f.asn,
    asOrg: f.asOrg,
    asNetwork: f.asNetwork,
    organization: f.organization,
    industry: f.industry,
    fqdn: f.fqdn,
    vlan: f.vlan,
    // Host fields, filled in by internalHost(); present on public endpoints too, for the one shape.
    hostname: '',
    role: 'guest',
    os: 'linux',
    managed: false,
    admin: false,
    activity: 0,
    ephemeralLo: 49152,
    ephemeralHi: 65535,
  };
  return shared;
}

export function internalHost(
  fields: Pick<InternalHost, 'ip' | 'hostname' | 'fqdn' | 'role' | 'os' | 'managed' | 'admin' | 'activity' | 'vlan' | 'locationNetwork'>,
  site: Place,
): InternalHost {
  // Windows and macOS use the IANA ephemeral range; Linux its own default.
  const linux = fields.os === 'linux';
  const host = endpoint({
    ip: fields.ip,
    addressType: 'private',
    place: site,
    rtt: 0.0004,
    locationNetwork: fields.locationNetwork,
    fqdn: fields.fqdn,
    vlan: fields.vlan,
  }) as InternalHost;
  host.hostname = fields.hostname;
  host.role = fields.role;
  host.os = fields.os;
  host.managed = fields.managed;
  host.admin = fields.admin;
  host.activity = fields.activity;
  host.ephemeralLo = linux ? 32768 : 49152;
  host.ephemeralHi = linux ? 60999 : 65535;
  return host;
}

const NAME_SALTS = new Map<string, number>();

/**
 * A process keeps one pid per host for the whole run, as a long-lived program
 * does. Derived from the address and the name (no per-host state), so it is
 * cheap and the same in every run.
 */
export function pidOf(ipNum: number, processName: string): number {
  if (processName === 'System') return 4;
  let salt = NAME_SALTS.get(processName);
  if (salt === undefined) {
    salt = hashString(processName);
    NAME_SALTS.set(processName, salt);
  }
  return 300 + (mix32(ipNum ^ salt) % 30000) * 4;
}

function publicEndpoint(
  ip: string,
  network: string,
  org: { name: string; asn: number; asOrg?: string; industry: string },
  place: Place,
  site: Place,
): Endpoint {
  if (isPrivate(ip)) throw new Error(`catalog address ${ip} is private`);
  return endpoint({
    ip,
    addressType: 'public',
    place,
    rtt: baseRttSecs(site, place),
    asn: org.asn,
    asOrg: org.asOrg ?? org.name,
    asNetwork: network,
    organization: org.name,
    industry: org.industry,
  });
}

/** Address number `index` of an org's prefix, as a public endpoint. */
export function endpointInOrg(org: OrgDef | RareOrg, index: number, site: Place): Endpoint {
  const cidr = parseCidr(org.cidr);
  const ip = hostInCidr(cidr, hashString(`${org.name}#${index}`));
  return publicEndpoint(ip, cidr.text, org, PLACES[org.place], site);
}

/**
 * A handful of addresses per org: a real network reaches a limited set of each
 * provider's front ends, and explore's `endpoints` count should stay small.
 */
export function orgEndpoints(org: OrgDef | RareOrg, count: number, site: Place): Endpoint[] {
  const endpoints: Endpoint[] = [];
  const seen = new Set<string>();
  for (let i = 0; endpoints.length < count && i < count * 4; i++) {
    const endpoint = endpointInOrg(org, i, site);
    if (seen.has(endpoint.ip)) continue;
    seen.add(endpoint.ip);
    endpoints.push(endpoint);
  }
  return endpoints;
}

export function anycastEndpoints(org: OrgDef, anycast: NonNullable<ServiceDef['anycast']>, site: Place): Endpoint[] {
  return anycast.ips.map((ip) => publicEndpoint(ip, anycast.network, org, PLACES[org.place], site));
}
