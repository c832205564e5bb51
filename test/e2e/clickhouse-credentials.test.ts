import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClickHouseHttpServer, startClickHouseHttpServer } from '../../tools/clickhouse-http/server.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openFlowEngine } from '../../src/infra/flow-engine.js';
import { createLogger } from '../../src/infra/logger.js';

/** Reserved URL characters included: in CLICKHOUSE_URL they travel percent-encoded. */
const USER = 'flowstore';
const PASSWORD = 'pa:ss/w@rd#Ü7';
const WRONG = 'not-the-password-42';

/** A self-signed certificate for 127.0.0.1, its own authority: CLICKHOUSE_CA_FILE names it. */
function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

/** A logger whose lines the test reads, at the most talkative level. */
function capturedLogger() {
  const lines: string[] = [];
  return { lines, logger: createLogger('debug', {}, (line) => lines.push(line)) };
}

/** Every spelling of a credential that could leak: as given, percent-encoded, inside Basic auth. */
function spellings(user: string, password: string): string[] {
  return [password, encodeURIComponent(password), Buffer.from(`${user}:${password}`).toString('base64')];
}

/** Opens the flow store as the service does (migrations included), runs a statement, closes. */
async function reach(config: ReturnType<typeof loadConfig>) {
  const { lines, logger } = capturedLogger();
  const engine = await openFlowEngine(config, logger);
  try {
    expect(await engine.query('/* test_one */ SELECT 1 AS one', {})).toEqual([{ one: 1 }]);
  } finally {
    await engine.close();
  }
  return lines;
}

describe('a ClickHouse server with a password, over https (CLICKHOUSE_USER/PASSWORD or URL userinfo, CLICKHOUSE_CA_FILE)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-ch-credentials-'));
  const tls = selfSignedCertificate(dir);
  let server: ClickHouseHttpServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startClickHouseHttpServer({
      dataDir: join(dir, 'ch'),
      user: USER,
      password: PASSWORD,
      tls: { cert: readFileSync(tls.cert), key: readFileSync(tls.key) },
    });
    env = { DATA_DIR: join(dir, 'data'), CLICKHOUSE_URL: server.url, CLICKHOUSE_CA_FILE: tls.cert };
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches it with CLICKHOUSE_USER and CLICKHOUSE_PASSWORD; the configuration prints no password', async () => {
    const config = loadConfig({ ...env, CLICKHOUSE_USER: USER, CLICKHOUSE_PASSWORD: PASSWORD });
    const lines = await reach(config);
    expect(lines.some((line) => line.includes('clickhouse.ready'))).toBe(true);
    // What a careless line would print: the whole configuration, as a log field and as console.log shows it.
    const { lines: more, logger } = capturedLogger();
    logger.info('config', { config });
    const printed = [...lines, ...more, inspect(config, { depth: Infinity }), String(config.clickhouse?.password)].join('\n');
    expect(printed).toContain('[redacted]');
    for (const secret of spellings(USER, PASSWORD)) expect(printed).not.toContain(secret);
  });

  it('reaches it with the credentials in CLICKHOUSE_URL, and keeps the URL without them', async () => {
    const url = new URL(server.url);
    url.username = USER;
    url.password = PASSWORD; // the setter percent-encodes it: pa%3Ass%2Fw%40rd%23%C3%9C7
    const config = loadConfig({ ...env, CLICKHOUSE_URL: url.href });
    expect(config.clickhouse).toMatchObject({ user: USER, url: `${server.url}/` });
    expect(config.clickhouse?.password?.reveal()).toBe(PASSWORD);
    const lines = await reach(config);
    const printed = [...lines, inspect(config, { depth: Infinity }), JSON.stringify(config)].join('\n');
    for (const secret of spellings(USER, PASSWORD)) expect(printed).not.toContain(secret);
  });

  it('fails the start on a wrong password with an error and log lines that hold no credential', async () => {
    const config = loadConfig({ ...env, CLICKHOUSE_USER: USER, CLICKHOUSE_PASSWORD: WRONG });
    const { lines, logger } = capturedLogger();
    const error = await openFlowEngine(config, logger).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toMatch(/Authentication failed/);
    // As main.ts prints a failed start (console.error), and as a log line would carry it.
    logger.error('server.start_failed', { error });
    const printed = [inspect(error, { depth: Infinity }), ...lines].join('\n');
    for (const secret of spellings(USER, WRONG)) expect(printed).not.toContain(secret);
  });

  it("checks the server's certificate: without CLICKHOUSE_CA_FILE a self-signed one is refused", async () => {
    const config = loadConfig({ ...env, CLICKHOUSE_CA_FILE: '', CLICKHOUSE_USER: USER, CLICKHOUSE_PASSWORD: PASSWORD });
    await expect(openFlowEngine(config, capturedLogger().logger)).rejects.toThrow(/self[- ]signed certificate/);
  });

  it('refuses credentials given twice, a CA file it cannot read, a CA for plain http, credentials without a server', () => {
    const problem = (extra: Record<string, string>) => {
      try {
        loadConfig({ DATA_DIR: join(dir, 'data'), ...extra });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        const message = (error as ConfigError).message;
        for (const secret of spellings(USER, PASSWORD)) expect(message).not.toContain(secret);
        return message;
      }
      throw new Error('the configuration was accepted');
    };
    const withUserinfo = `https://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:8443`;
    expect(problem({ CLICKHOUSE_URL: withUserinfo, CLICKHOUSE_PASSWORD: PASSWORD })).toMatch(/CLICKHOUSE_URL: carries credentials .* give them once/);
    expect(problem({ CLICKHOUSE_URL: 'https://127.0.0.1:8443', CLICKHOUSE_CA_FILE: join(dir, 'missing.pem') })).toMatch(
      /CLICKHOUSE_CA_FILE: cannot read .*missing\.pem \(ENOENT\)/,
    );
    expect(problem({ CLICKHOUSE_URL: 'http://127.0.0.1:8123', CLICKHOUSE_CA_FILE: tls.cert })).toMatch(/CLICKHOUSE_CA_FILE: needs an https/);
    expect(problem({ CLICKHOUSE_PASSWORD: PASSWORD })).toMatch(/CLICKHOUSE_PASSWORD: set without CLICKHOUSE_URL/);
    expect(problem({ CLICKHOUSE_URL: 'ftp://127.0.0.1/' })).toMatch(/CLICKHOUSE_URL: must be http/);
  });
});

/** A client certificate issued by an authority of its own: the server trusts that authority. */
function clientCertificate(dir: string): { ca: string; cert: string; key: string } {
  const [ca, caKey, cert, key, csr] = ['client-ca.pem', 'client-ca-key.pem', 'client.pem', 'client-key.pem', 'client.csr'].map((f) => join(dir, f)) as [
    string,
    string,
    string,
    string,
    string,
  ];
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  execFileSync('openssl', ['req', '-x509', ...ec, '-keyout', caKey, '-out', ca, '-days', '1', '-subj', '/CN=flowstore client CA'], { stdio: 'ignore' });
  execFileSync('openssl', ['req', ...ec, '-keyout', key, '-out', csr, '-subj', '/CN=breach-detection'], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', '1'], { stdio: 'ignore' });
  return { ca, cert, key };
}

describe('a ClickHouse server that requires a client certificate (CLICKHOUSE_CERT_FILE, CLICKHOUSE_KEY_FILE)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bd-ch-mtls-'));
  const tls = selfSignedCertificate(dir);
  const client = clientCertificate(dir);
  let server: ClickHouseHttpServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startClickHouseHttpServer({
      dataDir: join(dir, 'ch'),
      tls: { cert: readFileSync(tls.cert), key: readFileSync(tls.key), clientCa: readFileSync(client.ca) },
    });
    env = { DATA_DIR: join(dir, 'data'), CLICKHOUSE_URL: server.url, CLICKHOUSE_CA_FILE: tls.cert };
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches it with the certificate and key; the configuration prints no key', async () => {
    const config = loadConfig({ ...env, CLICKHOUSE_CERT_FILE: client.cert, CLICKHOUSE_KEY_FILE: client.key });
    const lines = await reach(config);
    const { lines: more, logger } = capturedLogger();
    logger.info('config', { config });
    const printed = [...lines, ...more, inspect(config, { depth: Infinity }), JSON.stringify(config)].join('\n');
    const keyBody = readFileSync(client.key, 'utf8').split('\n')[1]!;
    expect(printed).toContain('[redacted]');
    expect(printed).not.toContain(keyBody);
  });

  it('is refused without a client certificate', async () => {
    await expect(openFlowEngine(loadConfig(env), capturedLogger().logger)).rejects.toThrow(/alert certificate required/);
  });

  it('refuses a certificate without its key, and either over plain http', () => {
    const problem = (extra: Record<string, string>) => {
      try {
        loadConfig({ DATA_DIR: join(dir, 'data'), ...extra });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).message;
      }
      throw new Error('the configuration was accepted');
    };
    expect(problem({ CLICKHOUSE_URL: 'https://127.0.0.1:8443', CLICKHOUSE_CERT_FILE: client.cert })).toMatch(/give both .* or neither/);
    expect(problem({ CLICKHOUSE_URL: 'http://127.0.0.1:8123', CLICKHOUSE_CERT_FILE: client.cert, CLICKHOUSE_KEY_FILE: client.key })).toMatch(
      /CLICKHOUSE_KEY_FILE: needs an https/,
    );
    expect(problem({ CLICKHOUSE_KEY_FILE: client.key })).toMatch(/CLICKHOUSE_KEY_FILE: set without CLICKHOUSE_URL/);
  });
});
