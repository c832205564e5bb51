import type { WebSocket } from 'ws';
import type { Session } from '../auth/session.js';

/** graphql-ws's close code for a connection whose credentials no longer hold. */
export const UNAUTHORIZED_CLOSE = 4401;

interface Held {
  clientId: string;
  authorization: string;
  expiry: NodeJS.Timeout;
}

/**
 * The graphql-ws sockets opened with a token, and that token. A subscription's access is checked
 * when it starts, but it may stream for hours: a socket closes when its token expires or when its
 * client changes so that the token no longer authenticates (revoked: README, "tokens issued to it"
 * stop working), as collector channels do. The client reconnects with a fresh token, or without
 * one for the public device-status subscription.
 */
export class SocketSessions {
  private readonly held = new Map<WebSocket, Held>();

  constructor(private readonly authenticate: (authorization: string) => Promise<Session | undefined>) {}

  /** Tracks a socket opened with `authorization`; a bad token is left to fail each operation. */
  async opened(socket: WebSocket, authorization: string | null): Promise<void> {
    if (!authorization) return;
    const session = await this.authenticate(authorization).catch(() => undefined);
    if (!session || socket.readyState !== socket.OPEN) return;
    const expiry = setTimeout(() => this.close(socket, 'token expired'), Math.max(0, session.claims.expiresAt * 1000 - Date.now()));
    expiry.unref();
    this.held.set(socket, { clientId: session.claims.clientId, authorization, expiry });
    socket.once('close', () => this.forget(socket));
  }

  /** A client's row changed (in any process): its sockets whose token no longer authenticates close. */
  async clientChanged(clientId: string): Promise<void> {
    for (const [socket, held] of [...this.held]) {
      if (held.clientId !== clientId) continue;
      const valid = await this.authenticate(held.authorization).then(Boolean, () => false);
      if (!valid) this.close(socket, 'credentials revoked');
    }
  }

  private close(socket: WebSocket, reason: string): void {
    this.forget(socket);
    socket.close(UNAUTHORIZED_CLOSE, reason);
  }

  private forget(socket: WebSocket): void {
    clearTimeout(this.held.get(socket)?.expiry);
    this.held.delete(socket);
  }
}
