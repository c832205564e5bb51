import { z } from 'zod';
import { storableJsonProblem } from '../../infra/json-shape.js';
import { formattingProblem, unprintable } from '../../infra/text.js';

/** Messages of docs/collector-protocol.md section 2, validated as they arrive. */
const text = z
  .string()
  .max(256)
  .superRefine((value, ctx) => {
    const problem = unprintable.test(value) ? 'must not contain control characters or lone surrogates' : formattingProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
const optionalText = text.nullish();

/** Bounds of a hello's free-form `hardware` and `services`: stored on the node and shown in every node view. */
export const FACTS_LIMITS = { depth: 16, bytes: 64 * 1024 } as const;
/** How deep a command result's `data` may nest: it is stored (relayed) and rendered as JSON. */
export const RESULT_MAX_DEPTH = 64;

/** An object the node keeps: storable, and small enough to show in every view of the node. */
const facts = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const problem = storableJsonProblem(value, FACTS_LIMITS.depth);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    else if (Buffer.byteLength(JSON.stringify(value)) > FACTS_LIMITS.bytes)
      ctx.addIssue({ code: 'custom', message: `must be at most ${FACTS_LIMITS.bytes} bytes of JSON` });
  })
  .nullish();

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
  hardware: facts,
  services: facts,
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

export interface CommandResult {
  ok: boolean;
  data?: Record<string, unknown> | null;
  error?: { code: string; message: string } | null;
}

/**
 * A result as the service takes it: one whose `data` could not be stored or rendered (too deep,
 * NUL, lone surrogates) is the collector's failure to answer, not a frame that closes the channel.
 */
export function checkedResult(result: CommandResult): CommandResult {
  const problem = result.data ? storableJsonProblem(result.data, RESULT_MAX_DEPTH) : undefined;
  return problem ? { ok: false, error: { code: 'invalid_result', message: `the answer's data ${problem}` } } : result;
}

/** Why a frame was refused, as a close reason: the first problem and where (a reason holds 123 bytes). */
export function refusalReason(error: unknown): string {
  const issue = error instanceof z.ZodError ? error.issues[0] : undefined;
  const reason = issue ? `malformed message: ${issue.path.join('.') || 'frame'} ${issue.message}` : 'malformed message';
  return Buffer.from(reason)
    .subarray(0, 120)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
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
/**
 * Largest `hello`: its facts hold 64 KiB of JSON each, even written all in `\u` escapes. Checked
 * before the frame is parsed, so a collector cannot hold the event loop with a 64 MiB hello.
 */
export const MAX_HELLO_BYTES = 1024 * 1024;
