// The collector's log: one JSON line per event on stderr, and the last lines kept in memory so
// the `diagnostics` and `manage logs` commands can answer with what the collector really logged.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export const LOG_LEVELS = Object.keys(ORDER) as LogLevel[];

/** A fixed-size ring of the latest log lines. */
export class LogRing {
  private readonly lines: string[];
  private next = 0;
  private count = 0;

  constructor(readonly capacity = 1000) {
    this.lines = new Array<string>(capacity);
  }

  push(line: string): void {
    this.lines[this.next] = line;
    this.next = (this.next + 1) % this.capacity;
    this.count = Math.min(this.count + 1, this.capacity);
  }

  /** The latest n lines, oldest first. */
  last(n: number): string[] {
    const take = Math.max(0, Math.min(Math.floor(n), this.count));
    const out: string[] = [];
    for (let i = take; i > 0; i--) out.push(this.lines[(this.next - i + this.capacity) % this.capacity]);
    return out;
  }

  get size(): number {
    return this.count;
  }
}

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
  readonly ring: LogRing;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go besides the ring; default stderr, null for nowhere (tests). */
  write?: ((line: string) => void) | null;
  ring?: LogRing;
  base?: Record<string, unknown>;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const ring = options.ring ?? new LogRing();
  const write = options.write === undefined ? (line: string) => void process.stderr.write(line + '\n') : options.write;
  const base = options.base ?? {};
  const emit = (at: Exclude<LogLevel, 'silent'>, event: string, fields?: Record<string, unknown>) => {
    if (ORDER[at] < ORDER[level]) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level: at, event, ...base, ...fields }, errorReplacer);
    ring.push(line);
    write?.(line);
  };
  return {
    debug: (e, f) => emit('debug', e, f),
    info: (e, f) => emit('info', e, f),
    warn: (e, f) => emit('warn', e, f),
    error: (e, f) => emit('error', e, f),
    child: (fields) => createLogger({ level, write, ring, base: { ...base, ...fields } }),
    ring,
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const cause = (value as { cause?: unknown }).cause;
    return { name: value.name, message: value.message, ...(cause instanceof Error ? { cause: cause.message } : {}) };
  }
  return value;
}
