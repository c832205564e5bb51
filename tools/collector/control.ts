// collector-protocol.md 2: the control channel. One WebSocket at a time; `hello` as soon as it
// opens, heartbeats at the interval `welcome` names, every command answered, and a new channel
// with backoff whenever the old one drops.

import WebSocket from 'ws';
import { CredentialRejected } from './auth.js';
import { Backoff, type BackoffOptions, sleep } from './backoff.js';
import { CommandError, type CommandHandler } from './commands/index.js';
import { wsUrl } from './http.js';
import type { Logger } from './logring.js';
import type { Tokens } from './ingest.js';

export const CONTROL_PATH = '/collector/control/1.0';

export const CloseCode = {
  normal: 1000,
  restart: 1012,
  noWelcome: 4000,
  protocol: 4400,
  unauthenticated: 4401,
  forbidden: 4403,
  replaced: 4409,
} as const;

/** Answers larger than this would be refused by the service (its frame limit is 64 MiB). */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

export interface Welcome {
  node_id: string;
  status: string;
  heartbeat_interval_s: number;
  config: unknown;
}

export interface ControlOptions {
  baseUrl: string;
  tokens: Tokens;
  logger: Logger;
  /** The hello fields (without `type`), read at every connect. */
  hello(): Record<string, unknown>;
  /** Extra heartbeat fields, e.g. `ingest`. */
  heartbeat?(): Record<string, unknown>;
  commands: Map<string, CommandHandler>;
  onWelcome?(welcome: Welcome): void;
  onConfig?(config: unknown): void;
  /** The service refused this collector for good (4403, a refused key): the channel stops. */
  onFatal?(error: Error): void;
  reconnect?: BackoffOptions;
  /** Close and reconnect when no `welcome` follows the hello. Default 15 s. */
  welcomeTimeoutMs?: number;
  /** WebSocket ping period; a missing pong ends the channel. Default 20 s. */
  pingIntervalMs?: number;
}

export interface ControlStats {
  connected: boolean;
  node_id: string | null;
  connects: number;
  welcomes: number;
  disconnects: number;
  commands: number;
  connected_since: string | null;
  last_close: { code: number; reason: string; at: string } | null;
  last_error: string | null;
}

interface SessionEnd {
  code: number;
  reason: string;
  welcomed: boolean;
  httpStatus?: number;
  serverError?: { code?: string; message?: string };
  fatal?: Error;
  immediate?: boolean;
}

export class ControlChannel {
  private ws?: WebSocket;
  private stopped = false;
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private welcome?: Welcome;
  private welcomeWaiters: Array<{ resolve: (w: Welcome) => void; reject: (e: Error) => void }> = [];
  private activeCommands = 0;
  private restartReason?: string;
  private readonly counters = { connects: 0, welcomes: 0, disconnects: 0, commands: 0 };
  private connectedSince?: number;
  private lastClose: ControlStats['last_close'] = null;
  private lastError: string | null = null;
  private readonly log: Logger;

  constructor(private readonly options: ControlOptions) {
    this.log = options.logger;
  }

  get nodeId(): string | undefined {
    return this.welcome?.node_id;
  }

  get connected(): boolean {
    return this.connectedSince !== undefined;
  }

  stats(): ControlStats {
    return {
      connected: this.connected,
      node_id: this.nodeId ?? null,
      ...this.counters,
      connected_since: this.connectedSince ? new Date(this.connectedSince).toISOString() : null,
      last_close: this.lastClose,
      last_error: this.lastError,
    };
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** The next welcome (or the current one when connected). */
  waitForWelcome(timeoutMs = 30_000): Promise<Welcome> {
    if (this.welcome && this.connected) return Promise.resolve(this.welcome);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.welcomeWaiters = this.welcomeWaiters.filter((w) => w.resolve !== done);
        reject(new Error(`no welcome from the service within ${timeoutMs} ms (${this.lastError ?? 'no error seen'})`));
      }, timeoutMs);
      const done = (w: Welcome) => {
        clearTimeout(timer);
        resolve(w);
      };
      this.welcomeWaiters.push({
        resolve: done,
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  }

  /** Opens a new channel (and so sends a new hello) once the commands being answered are done. */
  restart(reason: string): void {
    this.restartReason = reason;
    if (this.activeCommands === 0) this.restartNow();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    const ws = this.ws;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      ws.close(CloseCode.normal, 'collector stopping');
      const forced = setTimeout(() => ws.terminate(), 2_000);
      await new Promise<void>((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve() : ws.once('close', () => resolve())));
      clearTimeout(forced);
    }
    await this.loop;
    for (const waiter of this.welcomeWaiters.splice(0)) waiter.reject(new Error('the collector stopped'));
  }

  private restartNow(): void {
    const reason = this.restartReason;
    this.restartReason = undefined;
    if (!reason || !this.ws) return;
    this.log.info('control.restarting', { reason });
    this.ws.close(CloseCode.restart, reason.slice(0, 100));
  }

  private async run(): Promise<void> {
    const backoff = new Backoff({ initialMs: 500, maxMs: 30_000, ...this.options.reconnect });
    while (!this.stopped) {
      const end = await this.session();
      if (this.stopped) break;
      if (end.fatal) {
        this.lastError = end.fatal.message;
        this.log.error('control.refused', { error: end.fatal.message });
        for (const waiter of this.welcomeWaiters.splice(0)) waiter.reject(end.fatal);
        this.options.onFatal?.(end.fatal);
        break;
      }
      if (end.welcomed) backoff.reset();
      if (end.code === CloseCode.unauthenticated || end.httpStatus === 401) this.options.tokens.invalidate();
      const delay = end.immediate ? 0 : end.code === CloseCode.replaced ? backoff.maxMs : backoff.next();
      this.log.warn('control.reconnecting', {
        in_ms: delay,
        code: end.code,
        reason: end.reason || undefined,
        http_status: end.httpStatus,
        server_error: end.serverError,
      });
      await sleep(delay, this.abort.signal);
    }
  }

  /** One channel, from connect to close. */
  private async session(): Promise<SessionEnd> {
    let token: string;
    try {
      token = await this.options.tokens.token();
    } catch (error) {
      if (error instanceof CredentialRejected) return { code: 0, reason: '', welcomed: false, fatal: error };
      this.lastError = (error as Error).message;
      this.log.warn('control.token_failed', { error });
      return { code: 0, reason: 'no token', welcomed: false };
    }
    if (this.stopped) return { code: 0, reason: 'stopped', welcomed: false };
    const url = wsUrl(this.options.baseUrl, CONTROL_PATH);
    return new Promise<SessionEnd>((resolve) => {
      const end: SessionEnd = { code: 0, reason: '', welcomed: false };
      const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, handshakeTimeout: 10_000, maxPayload: MAX_FRAME_BYTES });
      this.ws = ws;
      let heartbeat: NodeJS.Timeout | undefined;
      let ping: NodeJS.Timeout | undefined;
      let welcomeTimer: NodeJS.Timeout | undefined;
      let alive = true;

      ws.on('open', () => {
        this.counters.connects++;
        this.send(ws, { type: 'hello', ...this.options.hello() });
        welcomeTimer = setTimeout(() => ws.close(CloseCode.noWelcome, 'no welcome'), this.options.welcomeTimeoutMs ?? 15_000);
        ping = setInterval(() => {
          if (!alive) return ws.terminate();
          alive = false;
          ws.ping();
        }, this.options.pingIntervalMs ?? 20_000);
      });
      ws.on('pong', () => (alive = true));
      ws.on('message', (data, isBinary) => {
        alive = true;
        if (isBinary) return this.log.warn('control.binary_frame_ignored');
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(data.toString()) as Record<string, unknown>;
        } catch {
          return this.log.warn('control.bad_frame', { bytes: (data as Buffer).length });
        }
        switch (message.type) {
          case 'welcome': {
            clearTimeout(welcomeTimer);
            const welcome = message as unknown as Welcome;
            end.welcomed = true;
            this.welcome = welcome;
            this.counters.welcomes++;
            this.connectedSince = Date.now();
            this.lastError = null;
            const intervalS = Number(welcome.heartbeat_interval_s) > 0 ? Number(welcome.heartbeat_interval_s) : 30;
            clearInterval(heartbeat);
            heartbeat = setInterval(() => this.send(ws, { type: 'heartbeat', ts: Date.now(), ...this.options.heartbeat?.() }), intervalS * 1000);
            this.log.info('control.welcome', { node_id: welcome.node_id, status: welcome.status, heartbeat_interval_s: intervalS });
            this.options.onWelcome?.(welcome);
            for (const waiter of this.welcomeWaiters.splice(0)) waiter.resolve(welcome);
            return;
          }
          case 'config':
            this.log.info('control.config', { config: message.config });
            this.options.onConfig?.(message.config);
            return;
          case 'command':
            void this.answer(ws, message);
            return;
          case 'error':
            end.serverError = { code: String(message.code ?? ''), message: String(message.message ?? '') };
            this.lastError = `${end.serverError.code}: ${end.serverError.message}`;
            this.log.warn('control.server_error', end.serverError);
            return;
          default:
            this.log.debug('control.unknown_message', { type: message.type });
        }
      });
      ws.on('error', (error) => {
        // ws reports a refused upgrade as "Unexpected server response: 401".
        const status = /Unexpected server response: (\d+)/.exec(error.message);
        if (status) end.httpStatus = Number(status[1]);
        this.lastError = error.message;
        this.log.warn('control.socket_error', { error: error.message });
      });
      ws.on('close', (code, reason) => {
        clearTimeout(welcomeTimer);
        clearInterval(heartbeat);
        clearInterval(ping);
        if (this.ws === ws) this.ws = undefined;
        this.restartReason = undefined; // the next channel says hello anyway
        end.code = code;
        end.reason = reason.toString();
        if (this.connectedSince !== undefined) this.counters.disconnects++;
        this.connectedSince = undefined;
        this.lastClose = { code, reason: end.reason, at: new Date().toISOString() };
        if (code === CloseCode.restart && !this.stopped) end.immediate = true;
        if (code === CloseCode.forbidden) {
          end.fatal = new Error(
            `the service refused this collector (4403${end.serverError ? ` ${end.serverError.code}: ${end.serverError.message}` : `: ${end.reason}`})`,
          );
        } else if (end.httpStatus === 403) {
          end.fatal = new Error('the service refused the control channel (HTTP 403: the credential lacks the ingest scope)');
        }
        if (!this.stopped) this.log.info('control.closed', { code, reason: end.reason || undefined, welcomed: end.welcomed });
        resolve(end);
      });
    });
  }

  private send(ws: WebSocket, message: Record<string, unknown>): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(JSON.stringify(message), (error) => error && this.log.warn('control.send_failed', { type: message.type, error: error.message }));
  }

  private async answer(ws: WebSocket, message: Record<string, unknown>): Promise<void> {
    const id = String(message.id ?? '');
    const name = String(message.name ?? '');
    const args = message.args && typeof message.args === 'object' && !Array.isArray(message.args) ? (message.args as Record<string, unknown>) : {};
    const deadlineMs = Number(message.deadline_ms) > 0 ? Number(message.deadline_ms) : Date.now() + 10_000;
    this.counters.commands++;
    const started = Date.now();
    this.log.info('command.received', { id, name, args: loggable(args) });
    if (started > deadlineMs) return this.log.warn('command.expired', { id, name });
    this.activeCommands++;
    let result: Record<string, unknown>;
    try {
      const handler = this.options.commands.get(name);
      if (!handler) throw new CommandError('unknown_command', `this collector does not know the command ${JSON.stringify(name)}`);
      result = { ok: true, data: await handler({ id, name, args, deadlineMs }) };
    } catch (error) {
      const code = error instanceof CommandError ? error.code : 'internal_error';
      result = { ok: false, error: { code, message: String((error as Error)?.message ?? error).slice(0, 2000) } };
    }
    const ok = result.ok as boolean;
    this.log[ok ? 'info' : 'warn']('command.answered', { id, name, ok, ms: Date.now() - started, ...(ok ? {} : { error: result.error }) });
    if (Date.now() > deadlineMs) this.log.warn('command.late', { id, name, late_ms: Date.now() - deadlineMs });
    await new Promise<void>((resolve) => {
      if (ws.readyState !== WebSocket.OPEN) {
        this.log.warn('command.answer_lost', { id, name });
        return resolve();
      }
      ws.send(JSON.stringify({ type: 'result', id, ...result }), () => resolve());
    });
    this.activeCommands--;
    if (this.activeCommands === 0 && this.restartReason) this.restartNow();
  }
}

/** Command arguments for the log, without the signature of a signed download URL. */
function loggable(args: Record<string, unknown>): Record<string, unknown> {
  if (typeof args.url !== 'string') return args;
  try {
    const url = new URL(args.url);
    return { ...args, url: `${url.origin}${url.pathname}` };
  } catch {
    return { ...args, url: '(not a URL)' };
  }
}
