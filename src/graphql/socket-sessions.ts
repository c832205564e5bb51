import type { WebSocket } from 'ws';
import type { Actor, Session } from '../auth/session.js';

/** graphql-ws's close code for a connection whose credentials no longer hold. */
export const UNAUTHORIZED_CLOSE = 4401;

/** What a graphql-ws connection presented: a bearer token in its parameters, or its upgrade's session cookie. */
interface SocketCredentials {
  authorization: string | null;
  sessionCookie: string | null;
}

interface Held {
  actor: Actor;
  credentials: SocketCredentials;
  expiry: NodeJS.Timeout;
}

/**
 * The graphql-ws sockets opened with credentials, and those credentials. A subscription's access
 * is checked when it starts, but it may stream for hours: a socket closes when its credentials
 * end (a token expires; a person's session reaches its idle or absolute end, unless other
 * requests kept it in use) or when its caller changes so that they no longer authenticate (a
 * client revoked: README, "tokens issued to it" stop working; a session revoked or signed out, a
 * person disabled), as collector channels do. The client reconnects with fresh credentials, or
 * without for the public device-status subscription.
 */
export class SocketSessions {
  private readonly held = new Map<WebSocket, Held>();

  constructor(private readonly authenticate: (credentials: SocketCredentials) => Promise<Session | undefined>) {}

  /** Tracks a socket opened with `credentials`; bad ones are left to fail each operation. */
  async opened(socket: WebSocket, credentials: SocketCredentials): Promise<void> {
    if (!credentials.authorization && !credentials.sessionCookie) return;
    const session = await this.authenticate(credentials).catch(() => undefined);
    if (!session || socket.readyState !== socket.OPEN) return;
    this.held.set(socket, { actor: session.actor, credentials, expiry: this.expiryOf(socket, session) });
    socket.once('close', () => this.forget(socket));
  }

  /** A caller's credentials changed (in any process): its sockets whose credentials no longer authenticate close. */
  async actorChanged(actor: Actor): Promise<void> {
    for (const [socket, held] of [...this.held]) {
      if (held.actor.kind === actor.kind && held.actor.id === actor.id) await this.recheck(socket, held, 'credentials revoked');
    }
  }

  /** At the credentials' end: a session used meanwhile lives on (until its new end), anything else closes. */
  private expiryOf(socket: WebSocket, session: Session): NodeJS.Timeout {
    const timer = setTimeout(
      () => {
        const held = this.held.get(socket);
        if (held) void this.recheck(socket, held, held.actor.kind === 'client' ? 'token expired' : 'session expired');
      },
      Math.max(0, session.expiresAt - Date.now()),
    );
    timer.unref();
    return timer;
  }

  private async recheck(socket: WebSocket, held: Held, reason: string): Promise<void> {
    const session = await this.authenticate(held.credentials).catch(() => undefined);
    if (!this.held.has(socket)) return;
    if (!session) return this.close(socket, reason);
    clearTimeout(held.expiry);
    held.expiry = this.expiryOf(socket, session);
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
