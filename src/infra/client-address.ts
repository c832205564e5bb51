import type { IncomingMessage } from 'node:http';

/**
 * The address a request is counted under (src/infra/rate-limits.ts): the socket's peer, never a
 * header a client can write (X-Forwarded-For is not read: behind a reverse proxy every request
 * counts as the proxy's, README Configuration). IPv4 as is (also when IPv4-mapped); IPv6 by its /64,
 * the block one subscriber usually holds whole, so hopping addresses inside it does not help.
 */
export function clientAddress(req: Pick<IncomingMessage, 'socket'>): string {
  return addressKey(req.socket.remoteAddress ?? 'unknown');
}

export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(':')) return address;
  const bare = address.split('%')[0];
  const [head, tail] = bare.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => (Number.parseInt(group, 16) || 0).toString(16))
    .join(':')}::/64`;
}
