/**
 * `npm run bench`: token issuance and the authenticated REST read, each beside bare graphql-yoga
 * answering `{ __typename }` on this machine in the same run. Targets (issue 2): ≥ 5,000 tokens/s;
 * the REST read ≥ 0.8× bare yoga, with p99 ≤ 10 ms at half of its own peak rate. Issue 25: the
 * node list of an MSP with 1,000 nodes over 20 children ≥ 0.5× the deployment list's req/s; the
 * same per item served, and a 20-node list, show how much of the gap is the 100× larger answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from './load.js';
import { BENCH_STEADY_STATE, startProcess, stopProcess } from './processes.js';
import { adminCli } from '../../test/kit/admin-cli.js';
import { openDatabase } from '../../src/infra/database.js';
import { newId } from '../../src/infra/ids.js';
import { createLogger } from '../../src/infra/logger.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const dataDir = mkdtempSync(join(tmpdir(), 'bd-bench-'));
const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', ...BENCH_STEADY_STATE, DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '' };

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
  const bearer = async (body: string) =>
    `Bearer ${((await (await fetch(`${server.url}/rest/oauth2/token/1.0`, { method: 'POST', headers: json, body })).json()) as { access_token: string }).access_token}`;
  const auth = { authorization: await bearer(credentials), 'content-type': 'application/json' };
  const fleet = await seedFleet('fleet', 1000);
  const smallFleet = await seedFleet('small', 20);

  const warm = (url: string, extra: object) => load({ url, seconds: 2, ...extra });
  const bare = { url: `${baseline.url}/graphql`, method: 'POST' as const, headers: json, body: '{"query":"{ __typename }"}' };
  const tokens = { url: `${server.url}/rest/oauth2/token/1.0`, method: 'POST' as const, headers: json, body: credentials };
  const read = { url: `${server.url}/rest/deployments/1.0`, headers: auth };
  const nodes = { url: `${server.url}/rest/nodes/1.0`, headers: { authorization: await bearer(fleet) } };
  const fewNodes = { url: `${server.url}/rest/nodes/1.0`, headers: { authorization: await bearer(smallFleet) } };

  await warm(bare.url, bare);
  const bareResult = await load({ ...bare, seconds });
  await warm(tokens.url, tokens);
  const tokenResult = await load({ ...tokens, seconds });
  await warm(read.url, read);
  const readResult = await load({ ...read, seconds });
  const halfRate = await load({ ...read, seconds, rate: Math.max(1, Math.floor(readResult.rps / 2)), connections: 16 });
  await warm(nodes.url, nodes);
  const nodesResult = await load({ ...nodes, seconds });
  const nodesRatio = nodesResult.rps / readResult.rps;
  const nodesBytes = await answerBytes(nodes);
  const sameSize = { url: `${baseline.url}/static/${nodesBytes}` };
  await warm(sameSize.url, sameSize);
  const sameSizeResult = await load({ ...sameSize, seconds });
  await warm(fewNodes.url, fewNodes);
  const fewNodesResult = await load({ ...fewNodes, seconds });

  const row = (name: string, r: { rps: number; p50: number; p99: number; non2xx: number }, ratio?: number) =>
    console.log(
      `${name.padEnd(44)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(1).padStart(5)} ms  p99 ${r.p99.toFixed(1).padStart(5)} ms` +
        (ratio === undefined ? '' : `  ${ratio.toFixed(2)}× baseline`) +
        (r.non2xx ? `  (${r.non2xx} non-2xx!)` : ''),
    );
  console.log(`database: ${env.DATABASE_URL ? 'PostgreSQL server' : 'embedded PGlite'}; ${seconds}s per run`);
  row('baseline: bare graphql-yoga { __typename }', bareResult);
  row('POST /rest/oauth2/token/1.0 (target ≥ 5000/s)', tokenResult, tokenResult.rps / bareResult.rps);
  row(`GET /rest/deployments/1.0 (${kb(await answerBytes(read))} KB; target ≥ 0.8×)`, readResult, readResult.rps / bareResult.rps);
  row(`  …at half its peak rate (target p99 ≤ 10 ms)`, halfRate);
  row(`GET /rest/nodes/1.0, 1,000 nodes (${kb(nodesBytes)} KB)`, nodesResult);
  console.log(`node list / deployment list: ${nodesRatio.toFixed(3)}× (target ≥ 0.5: ${nodesRatio >= 0.5 ? 'met' : 'NOT met'})`);
  // The deployment list above carries 10 items; per item served, the two lists compare as:
  console.log(`  …items per second: ${((nodesResult.rps * 1000) / (readResult.rps * 10)).toFixed(2)}× the deployment list's`);
  // What no code of ours can beat: node:http sending the same number of bytes from memory.
  row(`baseline: ${kb(nodesBytes)} KB from memory, bare node:http`, sameSizeResult);
  console.log(`  …node list / the same bytes from memory: ${(nodesResult.rps / sameSizeResult.rps).toFixed(3)}×`);
  row('GET /rest/nodes/1.0, 20 nodes', fewNodesResult);
  console.log(`  …/ deployment list: ${(fewNodesResult.rps / readResult.rps).toFixed(2)}×`);
} finally {
  await stopProcess(server.child);
  await stopProcess(baseline.child);
  rmSync(dataDir, { recursive: true, force: true });
}

/**
 * An MSP with 20 children, `nodeCount` managed nodes spread over them (each on a profile of its
 * owner), and the credentials of a node_api client. Nodes and profiles are written through the running
 * server's database in two statements: the API enrols one node per credential and round trip.
 */
/** The size of one answer, which the ratio of the two lists mostly reflects. */
async function answerBytes(request: { url: string; headers: Record<string, string> }): Promise<number> {
  return (await (await fetch(request.url, { headers: request.headers })).arrayBuffer()).byteLength;
}

function kb(bytes: number): string {
  return (bytes / 1000).toFixed(1);
}

async function seedFleet(handle: string, nodeCount: number): Promise<string> {
  const msp = (await adminCli(['tenant', 'create', '--name', `MSP ${handle}`, '--handle', handle, '--msp'], env)).json;
  const client = (await adminCli(['client', 'create', '--customer', msp.customer_id, '--scopes', 'p.token.scope.node_api'], env)).json;
  const owners: string[] = [];
  for (let i = 0; i < 20; i++) {
    owners.push(
      (await adminCli(['tenant', 'create', '--name', `${handle} ${i}`, '--handle', `${handle}_${i}`, '--parent', msp.customer_id], env)).json.customer_id,
    );
  }
  const db = await openDatabase({ databaseUrl: env.DATABASE_URL || undefined, dataDir, logger: createLogger('warn'), role: 'client' });
  try {
    const profiles = owners.map((customerId) => ({ id: newId('prf'), customerId, name: `Profile of ${customerId}` }));
    await db.prisma.profile.createMany({ data: profiles });
    const now = Date.now();
    await db.prisma.node.createMany({
      data: Array.from({ length: nodeCount }, (_, i) => ({
        id: newId('node'),
        customerId: owners[i % owners.length],
        profileId: profiles[i % owners.length].id,
        machineId: `${handle}-${i}`,
        hostname: `${handle}-edge-${i}`,
        status: 'active',
        os: 'linux',
        arch: 'amd64',
        collectorVersion: '1.0.0',
        localIp: '10.0.0.5',
        publicIp: '203.0.113.9',
        lastSeenAt: new Date(now - i * 1000),
      })),
    });
  } finally {
    await db.close();
  }
  return JSON.stringify({ client_id: client.client_id, client_secret: client.client_secret });
}
