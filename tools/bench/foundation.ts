/**
 * `npm run bench`: token issuance and the authenticated REST read, each beside bare graphql-yoga
 * answering `{ __typename }` on this machine in the same run. Targets (issue 2): ≥ 5,000 tokens/s;
 * the REST read ≥ 0.8× bare yoga, with p99 ≤ 10 ms at half of its own peak rate.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from './load.js';
import { BENCH_RATE_LIMITS, startProcess, stopProcess } from './processes.js';
import { adminCli } from '../../test/kit/admin-cli.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const dataDir = mkdtempSync(join(tmpdir(), 'bd-bench-'));
const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', ...BENCH_RATE_LIMITS, DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '' };

const baseline = await startProcess('tools/bench/bare-yoga.ts', {});
const server = await startProcess('src/main.ts', env);
try {
  const msp = (await adminCli(['tenant', 'create', '--name', 'Bench', '--handle', 'bench', '--msp'], env)).json;
  const client = (await adminCli(['client', 'create', '--customer', msp.customer_id, '--scopes', 'p.token.scope.deployment_api'], env)).json;
  for (let i = 0; i < 10; i++) {
    await adminCli(['tenant', 'create', '--name', `Child ${i}`, '--handle', `child_${i}`, '--parent', msp.customer_id], env);
  }
  const credentials = JSON.stringify({ client_id: client.client_id, client_secret: client.client_secret });
  const json = { 'content-type': 'application/json' };
  const token = (await (await fetch(`${server.url}/rest/oauth2/token/1.0`, { method: 'POST', headers: json, body: credentials })).json()) as { access_token: string };
  const auth = { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' };

  const warm = (url: string, extra: object) => load({ url, seconds: 2, ...extra });
  const bare = { url: `${baseline.url}/graphql`, method: 'POST' as const, headers: json, body: '{"query":"{ __typename }"}' };
  const tokens = { url: `${server.url}/rest/oauth2/token/1.0`, method: 'POST' as const, headers: json, body: credentials };
  const read = { url: `${server.url}/rest/deployments/1.0`, headers: auth };

  await warm(bare.url, bare);
  const bareResult = await load({ ...bare, seconds });
  await warm(tokens.url, tokens);
  const tokenResult = await load({ ...tokens, seconds });
  await warm(read.url, read);
  const readResult = await load({ ...read, seconds });
  const halfRate = await load({ ...read, seconds, rate: Math.max(1, Math.floor(readResult.rps / 2)), connections: 16 });

  const row = (name: string, r: { rps: number; p50: number; p99: number; non2xx: number }, ratio?: number) =>
    console.log(
      `${name.padEnd(44)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(1).padStart(5)} ms  p99 ${r.p99.toFixed(1).padStart(5)} ms` +
        (ratio === undefined ? '' : `  ${ratio.toFixed(2)}× baseline`) +
        (r.non2xx ? `  (${r.non2xx} non-2xx!)` : ''),
    );
  console.log(`database: ${env.DATABASE_URL ? 'PostgreSQL server' : 'embedded PGlite'}; ${seconds}s per run`);
  row('baseline: bare graphql-yoga { __typename }', bareResult);
  row('POST /rest/oauth2/token/1.0 (target ≥ 5000/s)', tokenResult, tokenResult.rps / bareResult.rps);
  row('GET /rest/deployments/1.0 (target ≥ 0.8×)', readResult, readResult.rps / bareResult.rps);
  row(`  …at half its peak rate (target p99 ≤ 10 ms)`, halfRate);
} finally {
  await stopProcess(server.child);
  await stopProcess(baseline.child);
  rmSync(dataDir, { recursive: true, force: true });
}
