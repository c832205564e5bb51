import { z } from 'zod';

/** Messages of docs/collector-protocol.md section 2, validated as they arrive. */
const text = z.string().max(256);
const optionalText = text.nullish();

export const helloSchema = z.object({
  type: z.literal('hello'),
  kind: z.enum(['managed', 'legacy']).default('managed'),
  machine_id: optionalText,
  hostname: optionalText,
  collector_version: optionalText,
  os: optionalText,
  arch: optionalText,
  update_channel: optionalText,
  local_ip: optionalText,
  public_ip: optionalText,
  hardware: z.record(z.string(), z.unknown()).nullish(),
  services: z.record(z.string(), z.unknown()).nullish(),
});

export const heartbeatSchema = z.object({
  type: z.literal('heartbeat'),
  ts: z.number().optional(),
  ingest: z.record(z.string(), z.number()).optional(),
});

export const resultSchema = z.object({
  type: z.literal('result'),
  id: z.string().max(100),
  ok: z.boolean(),
  data: z.record(z.string(), z.unknown()).nullish(),
  error: z.object({ code: z.string().max(100), message: z.string().max(2000) }).nullish(),
});

export const collectorMessage = z.discriminatedUnion('type', [helloSchema, heartbeatSchema, resultSchema]);

export type Hello = z.infer<typeof helloSchema>;
export type CollectorMessage = z.infer<typeof collectorMessage>;

export interface CommandResult {
  ok: boolean;
  data?: Record<string, unknown> | null;
  error?: { code: string; message: string } | null;
}

export const CloseCode = {
  protocol: 4400,
  unauthenticated: 4401,
  forbidden: 4403,
  replaced: 4409,
  shuttingDown: 1001,
  /** This process can no longer vouch for its channels (its holder lock was lost): reconnect. */
  restart: 1012,
} as const;

export const HELLO_TIMEOUT_MS = 10_000;
export const HEARTBEAT_INTERVAL_S = 15;
/** last_seen_at is written at most this often per node; liveness windows are far wider. */
export const LAST_SEEN_WRITE_MS = 15_000;
/** Largest frame a collector may send (a gzipped heap profile fits). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
