import type { WebSocket } from 'ws';
import type { CommandResult } from './protocol.js';

export class CommandTimeout extends Error {}
export class ChannelClosed extends Error {}

/** One collector's open control channel: sends commands and matches their results by id. */
export class CollectorConnection {
  private readonly pending = new Map<string, { resolve: (r: CommandResult) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  lastSeenWrite = 0;

  constructor(
    readonly ws: WebSocket,
    readonly nodeId: string,
    readonly clientId: string,
    /** What the node's row names while this channel holds it (holder-lock.ts `heldSession`). */
    readonly session: string,
  ) {}

  send(message: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(message));
  }

  command(id: string, name: string, args: Record<string, unknown>, deadline: number): Promise<CommandResult> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.pending.delete(id);
          reject(new CommandTimeout(`no answer to ${name} by its deadline`));
        },
        Math.max(0, deadline - Date.now()),
      );
      this.pending.set(id, { resolve, reject, timer });
      this.send({ type: 'command', id, name, args, deadline_ms: deadline });
    });
  }

  settle(id: string, result: CommandResult): void {
    const waiter = this.pending.get(id);
    if (!waiter) return;
    clearTimeout(waiter.timer);
    this.pending.delete(id);
    waiter.resolve(result);
  }

  /** The channel dropped: every command still waiting fails now rather than at its deadline. */
  failAll(): void {
    for (const [id, waiter] of this.pending) {
      clearTimeout(waiter.timer);
      waiter.reject(new ChannelClosed('the collector disconnected'));
      this.pending.delete(id);
    }
  }
}
