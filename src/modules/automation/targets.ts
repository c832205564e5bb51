import { type LookupAddress, lookup as dnsLookup } from 'node:dns';
import { BlockList, type LookupFunction, isIP } from 'node:net';
import { badRequest } from '../../errors.js';

/**
 * Where webhooks may go. A rule's URL is chosen by a tenant, and the request leaves from inside
 * our network: without a check, a webhook could reach the metadata service, the database or any
 * internal admin port (SSRF). Targets must resolve only to public addresses, unless an
 * administrator allows private ones (AUTOMATION_ALLOW_PRIVATE_TARGETS).
 */

export const MAX_URL_LENGTH = 2048;

/** Loopback, private, link-local, shared, multicast, reserved and documentation ranges. */
const NON_PUBLIC: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.88.99.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  // IPv4-compatible (::a.b.c.d), unspecified and loopback. IPv4-mapped addresses (::ffff:a.b.c.d,
  // ::ffff:0:0/96, also spelt ::ffff:7f00:1) are checked against the IPv4 ranges above by
  // BlockList itself, which parses every spelling to the same 128 bits.
  ['::', 96, 'ipv6'],
  // IPv4-translated (::ffff:0:a.b.c.d, RFC 2765), NAT64, 6to4 and Teredo embed an IPv4 address
  // that may be private: refused as a whole rather than decoded.
  ['::ffff:0:0:0', 96, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
  ['2002::', 16, 'ipv6'],
  ['2001::', 23, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['3fff::', 20, 'ipv6'], // documentation, RFC 9637
  ['5f00::', 16, 'ipv6'], // SRv6 segment ids, RFC 9602
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['fec0::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

const nonPublic = new BlockList();
for (const [network, prefix, type] of NON_PUBLIC) nonPublic.addSubnet(network, prefix, type);

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  // A zone id (fe80::1%eth0) scopes an address to one link of this host: never a public one.
  if (family === 0 || address.includes('%')) return false;
  return !nonPublic.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A delivery-time refusal: permanent, the run fails without retrying. */
export class TargetRefused extends Error {
  constructor(
    readonly code: 'target_not_allowed' | 'target_unresolvable',
    message: string,
  ) {
    super(message);
  }
}

/** The URL of a webhook action: absolute http(s), no credentials, bounded. */
export function parseTargetUrl(raw: string, field = 'action.url'): URL {
  const text = raw.trim();
  if (text.length > MAX_URL_LENGTH) throw badRequest('invalid_request', `${field} must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badRequest('invalid_request', `${field} must be an absolute http or https URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('invalid_request', `${field} must be an absolute http or https URL`);
  if (url.username || url.password) throw badRequest('invalid_request', `${field} must not carry credentials; the body is signed instead`);
  if (!url.hostname) throw badRequest('invalid_request', `${field} must name a host`);
  url.hash = '';
  return url;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

type Resolve = (host: string) => Promise<string[]>;

const resolveAll: Resolve = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses.map((a) => a.address)))),
  );

/**
 * Checks where a URL leads now: every address its host resolves to must be public (one private
 * address is enough to refuse: the connection may pick any). Used when a rule is saved; delivery
 * repeats the check inside the connection itself (`guardedLookup`).
 */
export async function checkTarget(
  url: URL,
  allowPrivate: boolean,
  resolve: Resolve = resolveAll,
  /** The setting that allows private targets, named in the refusal. */
  setting = 'AUTOMATION_ALLOW_PRIVATE_TARGETS',
): Promise<void> {
  if (allowPrivate) return;
  const host = hostOf(url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await withTimeout(resolve(host), 5000);
    } catch {
      throw new TargetRefused('target_unresolvable', `The host ${host} could not be resolved`);
    }
  }
  if (!addresses.length) throw new TargetRefused('target_unresolvable', `The host ${host} could not be resolved`);
  if (!addresses.every(isPublicAddress)) {
    throw new TargetRefused(
      'target_not_allowed',
      `The host ${host} resolves to a private, loopback or link-local address; an administrator can allow such targets (${setting})`,
    );
  }
}

/**
 * The DNS lookup an outgoing webhook connection uses: it refuses the connection when any address
 * is not public. Checking in the connection's own lookup (not before it) defeats DNS rebinding:
 * the addresses checked are the ones connected to. IP-literal hosts skip lookups, so `deliver`
 * checks those with `checkTarget` first.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      if (!allowPrivate && (!addresses.length || !addresses.every((a) => isPublicAddress(a.address)))) {
        return callback(new TargetRefused('target_not_allowed', `The host ${hostname} resolves to a non-public address`), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error) => (clearTimeout(timer), reject(error)),
    );
  });
}
