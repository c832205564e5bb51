// What a command handler gets, and how it says no.

import type { Fetch } from '../http.js';
import type { Logger } from '../logring.js';

/** A refusal with a stable code, sent back as `result.error`. */
export class CommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface CommandRequest {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** Epoch ms after which the service no longer wants the answer. */
  deadlineMs: number;
}

export type CommandHandler = (request: CommandRequest) => Promise<Record<string, unknown>>;

/** The parts of a running collector that commands read and act on. */
export interface CollectorContext {
  logger: Logger;
  /** The version running now (hello.collector_version). */
  version(): string;
  /** Records a newly installed version (state dir) and announces it with a fresh hello. */
  installVersion(version: string): void;
  /** This host's platform as the service names it: `<os>_<arch>`. */
  platform(): { os: string; arch: string };
  /** Runtime, ingest, control and flow figures. */
  diagnostics(): Record<string, unknown>;
  /** A short summary: node, version, connection, counters. */
  status(): Record<string, unknown>;
  /** The config the service sent last (welcome or config). */
  config(): unknown;
  /** Reconnects the control channel (a new hello) after the current answer went out. */
  restartControl(reason: string): void;
  /** Mints a fresh token, proving the access key is still good. */
  refreshCredential(): Promise<{ expires_at: string | null }>;
  /** The service's download URL for a channel's latest build (api-spec.md, Collector download). */
  downloadUrl(os: string, arch: string, channel: string): string;
  /** Values that must never leave the process (the access key and its secret half). */
  secrets(): string[];
  fetch?: Fetch;
}

/** An integer argument clamped to [min, max]; `fallback` when absent or not a number. */
export function intArg(value: unknown, fallback: number, min: number, max: number): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) return fallback;
  return Math.max(min, Math.min(max, Math.floor(n)));
}
