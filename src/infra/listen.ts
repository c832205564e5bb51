import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts `server` on `host:port` (0: a free port); rejects when the port is taken. */
export async function listen(server: Server, port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

/** The URL a listening `server` answers on, an IPv6 host in brackets. */
export const listeningUrl = (server: Server, host: string): string =>
  `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
