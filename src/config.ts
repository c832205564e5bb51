import { resolve } from 'node:path';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const optionalUrl = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .pipe(z.url().optional())
  .optional();

const schema = z.object({
  PORT: port.default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_BASE_URL: optionalUrl,
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: optionalUrl,
  CLICKHOUSE_URL: optionalUrl,
  CLICKHOUSE_DATABASE: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('default'),
  FLOW_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  // Test-only knob: scales collector command deadlines (diagnostics 10 s, pprof duration + 15 s).
  COMMAND_TIMEOUT_SCALE: z.coerce.number().positive().max(1).default(1),
  TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  DEPLOYMENT_ENV: z.enum(['production', 'development']).default('production'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  DEVICE_CODE_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  DEVICE_POLL_INTERVAL_SECONDS: z.coerce.number().int().min(0).max(3600).default(5),
});

export interface Config {
  port: number;
  host: string;
  /** `{base_url}` of the spec; links in responses are built from it. */
  publicBaseUrl: string | undefined;
  dataDir: string;
  databaseUrl: string | undefined;
  clickhouseUrl: string | undefined;
  clickhouseDatabase: string;
  tokenTtlSeconds: number;
  commandTimeoutScale: number;
  /** Flows older than this are dropped by ClickHouse's TTL. */
  flowRetentionDays: number;
  deploymentEnv: 'production' | 'development';
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Device authorization lifetime (`expires_in`) and minimum wait between polls (`poll_interval`). */
  deviceCodeTtlSeconds: number;
  devicePollIntervalSeconds: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Parses the environment once; every problem is reported together, never one at a time. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    dataDir: resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    clickhouseUrl: e.CLICKHOUSE_URL,
    clickhouseDatabase: e.CLICKHOUSE_DATABASE,
    tokenTtlSeconds: e.TOKEN_TTL_SECONDS,
    commandTimeoutScale: e.COMMAND_TIMEOUT_SCALE,
    flowRetentionDays: e.FLOW_RETENTION_DAYS,
    deploymentEnv: e.DEPLOYMENT_ENV,
    logLevel: e.LOG_LEVEL,
    deviceCodeTtlSeconds: e.DEVICE_CODE_TTL_SECONDS,
    devicePollIntervalSeconds: e.DEVICE_POLL_INTERVAL_SECONDS,
  };
}
