import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StartError } from './start-error.js';

/** What a refused listen means, in words that say what to change. */
const LISTEN_PROBLEMS: Record<string, (where: string) => string> = {
  EADDRINUSE: (where) => `${where} is already in use by another process: stop it, or set PORT (and HOST) to a free one`,
  EACCES: (where) => `${where} needs privileges this user lacks: set PORT to 1024 or above`,
  EADDRNOTAVAIL: (where) => `${where}: HOST is not an address of this machine`,
};

/** Listens on PORT and HOST, or throws a StartError that says why not. */
export async function listen(server: Server, port: number, host: string): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    const problem = LISTEN_PROBLEMS[(error as NodeJS.ErrnoException).code ?? ''];
    if (problem) throw new StartError(`cannot listen: ${problem(`port ${port} on ${host}`)}`);
    throw error;
  }
}

/** The URL a listening `server` answers on, an IPv6 host in brackets. */
export const listeningUrl = (server: Server, host: string): string =>
  `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
