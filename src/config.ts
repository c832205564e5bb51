import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { plainAddress } from './infra/client-address.js';
import type { RateLimitSettings } from './infra/rate-limits.js';
import { Redacted } from './infra/redacted.js';

const port = z.coerce.number().int().min(0).max(65535);
const optionalUrl = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .pipe(z.url().optional())
  .optional();

// 32 random bytes in base64 (standard or URL-safe, padded or not), e.g. `openssl rand -base64 32`.
const secretsKey = z
  .string()
  .regex(/^[A-Za-z0-9+/_-]{43}=?$/, 'each key must be 32 bytes in base64 (openssl rand -base64 32)')
  .transform((v) => Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));

/** Unset when empty, as an unset variable in a shell or a compose file often is. */
const optionalText = z
  .string()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/** A PEM file's contents, read at start: an unreadable file is a configuration problem, not a failed first query. */
const pemFile = optionalText.transform((path, ctx) => {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})` });
    return z.NEVER;
  }
});

const rateLimit = z.coerce.number().int().min(0).max(1_000_000_000);

/** A true/false switch, off unless set to `true` or `1`. */
const flag = z
  .enum(['true', 'false', '1', '0'])
  .default('false')
  .transform((v) => v === 'true' || v === '1');

const schema = z.object({
  PORT: port.default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_BASE_URL: optionalUrl,
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: optionalUrl,
  // The key-encryption key(s), the first sealing, the others only opening (docs/secrets.md).
  SECRETS_KEY: z
    .string()
    .trim()
    .transform((v) => (v === '' ? [] : v.split(',').map((k) => k.trim())))
    .pipe(z.array(secretsKey).max(2, 'at most two keys: the current one, then the previous one'))
    .optional(),
  CLICKHOUSE_URL: optionalUrl,
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .default('default'),
  // Credentials for CLICKHOUSE_URL, unless it carries them itself (http://user:password@host:8123).
  CLICKHOUSE_USER: optionalText,
  CLICKHOUSE_PASSWORD: optionalText,
  // Certificate authorities (PEM) an https CLICKHOUSE_URL's certificate is checked against, instead of Node's.
  CLICKHOUSE_CA_FILE: pemFile,
  // A client certificate and its key (PEM) for a server that requires one (mutual TLS).
  CLICKHOUSE_CERT_FILE: pemFile,
  CLICKHOUSE_KEY_FILE: pemFile,
  FLOW_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  // Flows waiting to be stored beyond which a collector's batch is answered 503 (docs/flowstore.md "Group commit").
  INGEST_QUEUE_FLOWS: z.coerce.number().int().min(1).max(10_000_000).default(90_000),
  // Threads that parse, check and encode collectors' batches; default: the cores but one, 1 to 4.
  INGEST_WORKERS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(Math.max(1, Math.min(4, availableParallelism() - 1))),
  IP_ORG_DATASET: z.enum(['preload', 'lazy', 'off']).default('preload'),
  // Test-only knob: scales collector command deadlines (diagnostics 10 s, pprof duration + 15 s).
  COMMAND_TIMEOUT_SCALE: z.coerce.number().positive().max(1).default(1),
  TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  DEPLOYMENT_ENV: z.enum(['production', 'development']).default('production'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  DEVICE_CODE_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  DEVICE_POLL_INTERVAL_SECONDS: z.coerce.number().int().min(0).max(3600).default(5),
  // Rate limits of the anonymous endpoints (docs/device-flow.md, Rate limits): requests per window, 0 = unlimited.
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  RATE_LIMIT_TOKEN_PER_ADDRESS: rateLimit.default(120),
  RATE_LIMIT_TOKEN_PER_CLIENT: rateLimit.default(30),
  RATE_LIMIT_DEVICE_START_PER_ADDRESS: rateLimit.default(20),
  RATE_LIMIT_DEVICE_LOOKUP_PER_ADDRESS: rateLimit.default(30),
  RATE_LIMIT_DEVICE_POLL_PER_ADDRESS: rateLimit.default(300),
  RATE_LIMIT_SIGN_IN_PER_ADDRESS: rateLimit.default(30),
  // Reverse proxies whose X-Forwarded-For names the client (comma-separated addresses); none by default.
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== ''),
    )
    .refine((list) => list.every((a) => isIP(a) !== 0), 'must be a comma-separated list of IP addresses'),
  // How often expired device authorizations and ended rate-limit windows are deleted (0 = never).
  PURGE_INTERVAL_SECONDS: z.coerce.number().int().min(0).max(86_400).default(60),
  // Detection (docs/detections.md): how often every tenant is analysed (0 = never), over how much history.
  DETECTION_INTERVAL_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  DETECTION_WINDOW_MINUTES: z.coerce.number().int().min(5).max(10_080).default(60),
  // Webhook targets on private, loopback or link-local networks are refused unless this is true.
  AUTOMATION_ALLOW_PRIVATE_TARGETS: flag,
  // Single sign-on providers on private or loopback addresses (and http on this machine) are refused unless this is true.
  OIDC_ALLOW_PRIVATE_ISSUERS: flag,
  // Test-only knob: the first automation retry delay (it doubles per attempt).
  AUTOMATION_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(10_000),
  // /metrics (docs/operations.md): a bearer token it asks for, and/or a port of its own; with neither it is off.
  METRICS_TOKEN: z
    .string()
    .trim()
    .transform((v) => (v === '' ? undefined : v))
    .pipe(z.string().min(16, 'must be at least 16 characters (openssl rand -hex 32)').max(512).optional())
    .optional(),
  METRICS_PORT: z
    .string()
    .trim()
    .transform((v) => (v === '' ? undefined : Number(v)))
    .pipe(z.number().int().min(0).max(65535).optional())
    .optional(),
  METRICS_HOST: z.string().trim().min(1).optional(),
  // How often the per-node ingest summary line is written (src/modules/ingest/ingest.activity.ts).
  INGEST_LOG_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  // Audit log entries older than this are removed by the purge job (docs/audit.md).
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(365),
  // Console sign-in sessions (docs/users.md): ended after this long unused, and this long after sign-in whatever happens.
  SESSION_IDLE_SECONDS: z.coerce.number().int().min(1).max(604_800).default(1800),
  SESSION_MAX_SECONDS: z.coerce.number().int().min(1).max(2_592_000).default(43_200),
  // Failed sign-ins in a row that lock an account, and for how long.
  SIGN_IN_MAX_FAILURES: z.coerce.number().int().min(1).max(100).default(5),
  SIGN_IN_LOCKOUT_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
});

export interface Config {
  port: number;
  host: string;
  /** `{base_url}` of the spec; links in responses are built from it. */
  publicBaseUrl: string | undefined;
  dataDir: string;
  databaseUrl: string | undefined;
  /** SECRETS_KEY's keys (the first seals); empty when unset: the key file under DATA_DIR serves. */
  secretsKeys: Buffer[];
  /** A ClickHouse server (CLICKHOUSE_URL); undefined: chDB in DATA_DIR. */
  clickhouse: ClickHouseServer | undefined;
  tokenTtlSeconds: number;
  commandTimeoutScale: number;
  /** Flows older than this are dropped by ClickHouse's TTL. */
  flowRetentionDays: number;
  /** IP → organization dataset: load at start (`preload`), on first explore use (`lazy`), or never. */
  ipOrgDataset: 'preload' | 'lazy' | 'off';
  deploymentEnv: 'production' | 'development';
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Device authorization lifetime (`expires_in`) and minimum wait between polls (`poll_interval`). */
  deviceCodeTtlSeconds: number;
  devicePollIntervalSeconds: number;
  /** Limits of the anonymous endpoints, shared by every process through PostgreSQL. */
  rateLimits: RateLimitSettings;
  /** Peers whose X-Forwarded-For is believed (src/infra/client-address.ts); IPv4-mapped ones as IPv4. */
  trustedProxies: ReadonlySet<string>;
  /** Period of the purge of expired device authorizations and ended rate-limit windows (0: never). */
  purgeIntervalSeconds: number;
  /** Scheduled detection period (0: only on demand) and the sliding window each run reads. */
  detectionIntervalSeconds: number;
  detectionWindowMinutes: number;
  /** Let automation webhooks reach private, loopback and link-local addresses (docs/automation.md). */
  automationAllowPrivateTargets: boolean;
  /** Let single sign-on providers be on private or loopback addresses (docs/users.md). */
  oidcAllowPrivateIssuers: boolean;
  automationRetryBaseMs: number;
  ingestQueueFlows: number;
  ingestWorkers: number;
  /** /metrics: the bearer token it requires, and the port (on metricsHost) it is served on instead of PORT. */
  metrics: { token: string | undefined; port: number | undefined; host: string };
  ingestLogIntervalSeconds: number;
  /** Audit log entries older than this are removed by the purge job. */
  auditRetentionDays: number;
  /** Console sign-in (docs/users.md). */
  signIn: SignInSettings;
}

export interface SignInSettings {
  sessionIdleSeconds: number;
  sessionMaxSeconds: number;
  maxFailures: number;
  lockoutSeconds: number;
  /** The session cookie is `Secure` when the service is served over https (PUBLIC_BASE_URL). */
  secureCookies: boolean;
}

export interface ClickHouseServer {
  /** CLICKHOUSE_URL without credentials: fit to print. */
  url: string;
  database: string;
  user: string | undefined;
  password: Redacted | undefined;
  /** CLICKHOUSE_CA_FILE's contents; undefined: Node's certificate authorities. */
  caCert: Buffer | undefined;
  /** CLICKHOUSE_CERT_FILE and CLICKHOUSE_KEY_FILE's contents, the key kept out of logs. */
  clientCert: { cert: Buffer; key: Redacted } | undefined;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Every environment variable the server reads (the README's table lists each). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

/** Parses the environment once; every problem is reported together, never one at a time. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const clickhouse = clickhouseServer(e);
  return {
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    dataDir: resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    secretsKeys: e.SECRETS_KEY ?? [],
    clickhouse,
    tokenTtlSeconds: e.TOKEN_TTL_SECONDS,
    commandTimeoutScale: e.COMMAND_TIMEOUT_SCALE,
    flowRetentionDays: e.FLOW_RETENTION_DAYS,
    ipOrgDataset: e.IP_ORG_DATASET,
    deploymentEnv: e.DEPLOYMENT_ENV,
    logLevel: e.LOG_LEVEL,
    deviceCodeTtlSeconds: e.DEVICE_CODE_TTL_SECONDS,
    devicePollIntervalSeconds: e.DEVICE_POLL_INTERVAL_SECONDS,
    rateLimits: {
      windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
      doors: {
        token: { perAddress: e.RATE_LIMIT_TOKEN_PER_ADDRESS, perClient: e.RATE_LIMIT_TOKEN_PER_CLIENT },
        device_start: { perAddress: e.RATE_LIMIT_DEVICE_START_PER_ADDRESS, perClient: 0 },
        device_lookup: { perAddress: e.RATE_LIMIT_DEVICE_LOOKUP_PER_ADDRESS, perClient: 0 },
        device_poll: { perAddress: e.RATE_LIMIT_DEVICE_POLL_PER_ADDRESS, perClient: 0 },
        sign_in: { perAddress: e.RATE_LIMIT_SIGN_IN_PER_ADDRESS, perClient: 0 },
      },
    },
    trustedProxies: new Set(e.TRUSTED_PROXIES.map(plainAddress)),
    purgeIntervalSeconds: e.PURGE_INTERVAL_SECONDS,
    detectionIntervalSeconds: e.DETECTION_INTERVAL_SECONDS,
    detectionWindowMinutes: e.DETECTION_WINDOW_MINUTES,
    automationAllowPrivateTargets: e.AUTOMATION_ALLOW_PRIVATE_TARGETS,
    oidcAllowPrivateIssuers: e.OIDC_ALLOW_PRIVATE_ISSUERS,
    automationRetryBaseMs: e.AUTOMATION_RETRY_BASE_MS,
    ingestQueueFlows: e.INGEST_QUEUE_FLOWS,
    ingestWorkers: e.INGEST_WORKERS,
    metrics: { token: e.METRICS_TOKEN, port: e.METRICS_PORT, host: e.METRICS_HOST ?? e.HOST },
    ingestLogIntervalSeconds: e.INGEST_LOG_INTERVAL_SECONDS,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    signIn: {
      sessionIdleSeconds: e.SESSION_IDLE_SECONDS,
      sessionMaxSeconds: e.SESSION_MAX_SECONDS,
      maxFailures: e.SIGN_IN_MAX_FAILURES,
      lockoutSeconds: e.SIGN_IN_LOCKOUT_SECONDS,
      secureCookies: e.PUBLIC_BASE_URL?.startsWith('https:') ?? false,
    },
  };
}

/**
 * The ClickHouse server and how to reach it. Its credentials come either in the URL or in
 * CLICKHOUSE_USER/CLICKHOUSE_PASSWORD, never both (one would silently win); the URL kept has none.
 */
function clickhouseServer(e: z.infer<typeof schema>): ClickHouseServer | undefined {
  const problems: string[] = [];
  if (e.CLICKHOUSE_URL === undefined) {
    for (const name of ['CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'CLICKHOUSE_CA_FILE', 'CLICKHOUSE_CERT_FILE', 'CLICKHOUSE_KEY_FILE'] as const) {
      if (e[name] !== undefined) problems.push(`${name}: set without CLICKHOUSE_URL (the embedded chDB takes none)`);
    }
    if (problems.length > 0) throw new ConfigError(problems);
    return undefined;
  }
  const url = new URL(e.CLICKHOUSE_URL);
  const inUrl = url.username !== '' || url.password !== '';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push('CLICKHOUSE_URL: must be http:// or https://');
  if (inUrl && (e.CLICKHOUSE_USER !== undefined || e.CLICKHOUSE_PASSWORD !== undefined)) {
    problems.push('CLICKHOUSE_URL: carries credentials and so do CLICKHOUSE_USER/CLICKHOUSE_PASSWORD: give them once');
  }
  for (const name of ['CLICKHOUSE_CA_FILE', 'CLICKHOUSE_CERT_FILE', 'CLICKHOUSE_KEY_FILE'] as const) {
    if (e[name] !== undefined && url.protocol !== 'https:') problems.push(`${name}: needs an https:// CLICKHOUSE_URL`);
  }
  if ((e.CLICKHOUSE_CERT_FILE === undefined) !== (e.CLICKHOUSE_KEY_FILE === undefined)) {
    problems.push('CLICKHOUSE_CERT_FILE and CLICKHOUSE_KEY_FILE: give both (a client certificate and its key) or neither');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const user = inUrl ? decodeURIComponent(url.username) || undefined : e.CLICKHOUSE_USER;
  const password = inUrl ? decodeURIComponent(url.password) || undefined : e.CLICKHOUSE_PASSWORD;
  url.username = '';
  url.password = '';
  return {
    url: inUrl ? url.href : e.CLICKHOUSE_URL,
    database: e.CLICKHOUSE_DATABASE,
    user,
    password: password === undefined ? undefined : new Redacted(password),
    caCert: e.CLICKHOUSE_CA_FILE,
    clientCert:
      e.CLICKHOUSE_CERT_FILE && e.CLICKHOUSE_KEY_FILE ? { cert: e.CLICKHOUSE_CERT_FILE, key: new Redacted(e.CLICKHOUSE_KEY_FILE.toString()) } : undefined,
  };
}
