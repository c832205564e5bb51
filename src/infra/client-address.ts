import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * The address a request is counted under (src/infra/rate-limits.ts): the socket's peer. Only when
 * that peer is one of `trustedProxies` (TRUSTED_PROXIES) is X-Forwarded-For read, from the right:
 * the first entry that is not itself a trusted proxy is the client (entries left of it are the
 * client's own word). IPv4 as is (also when IPv4-mapped); IPv6 by its /64, the block one
 * subscriber usually holds whole, so hopping addresses inside it does not help.
 */
export function clientAddress(req: Pick<IncomingMessage, 'socket' | 'headers'>, trustedProxies: ReadonlySet<string>): string {
  const peer = plainAddress(req.socket.remoteAddress ?? 'unknown');
  if (!trustedProxies.has(peer)) return addressKey(peer);
  const forwarded = [req.headers['x-forwarded-for'] ?? []].flat().join(',').split(',');
  for (const entry of forwarded.map((e) => plainAddress(e.trim())).reverse()) {
    if (isIP(entry) === 0) break;
    if (!trustedProxies.has(entry)) return addressKey(entry);
  }
  return addressKey(peer);
}

/** IPv4-mapped IPv6 as plain IPv4, so a proxy is named one way in TRUSTED_PROXIES. */
export const plainAddress = (address: string) => /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;

export function addressKey(address: string): string {
  const plain = plainAddress(address);
  if (!plain.includes(':')) return plain;
  const bare = plain.split('%')[0];
  const [head, tail] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => (Number.parseInt(group, 16) || 0).toString(16))
    .join(':')}::/64`;
}
