// The breach-detection server in its embedded default (PGlite + chDB in a temporary DATA_DIR),
// inside its own namespace; the admin CLI on the same DATA_DIR (it reaches the running server's
// database through the socket there); the REST API through curl in the router's namespace, the
// only place (besides the server's) that reaches the management link.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Cleanup, runOk, startDaemon, waitForOutput } from './proc.js';
import { REPO_ROOT } from './services.js';
import { SERVER_IP, labNetworks } from './topology.js';

const PORT = 8080;
export const SERVER_URL = `http://${SERVER_IP}:${PORT}`;

export interface LabServer {
  dataDir: string;
  /** Runs an admin CLI command; returns its JSON. */
  admin(args: string[], timeoutMs?: number): Promise<any>;
  /** A REST call from the router's namespace; returns status and parsed body. */
  api(method: string, path: string, options?: { token?: string; body?: unknown }): Promise<{ status: number; body: any }>;
}

export async function startServer(options: { ns: string; apiNs: string; dir: string }, cleanup: Cleanup): Promise<LabServer> {
  const dataDir = join(options.dir, 'data');
  const env = {
    DATA_DIR: dataDir,
    // Only the lab's own addresses are ever contacted: no dataset download or lookup.
    IP_ORG_DATASET: 'off',
    // Detection runs when the lab asks (detect run), over the whole run.
    DETECTION_INTERVAL_SECONDS: '0',
    LOG_LEVEL: 'warn',
  };
  const server = cleanup.daemon(
    startDaemon('server', [process.execPath, 'src/start.cjs'], {
      ns: options.ns,
      logFile: join(options.dir, 'server.log'),
      cwd: REPO_ROOT,
      env: { ...env, HOST: SERVER_IP, PORT: String(PORT) },
    }),
  );
  await waitForOutput(server, /listening on http/, 120_000);

  const admin = async (args: string[], timeoutMs = 60_000) =>
    JSON.parse(await runOk([process.execPath, '--import', 'tsx', 'src/admin/cli.ts', ...args], { timeoutMs, cwd: REPO_ROOT, env }));

  const api = async (method: string, path: string, call: { token?: string; body?: unknown } = {}) => {
    const argv = ['curl', '-sS', '--max-time', '60', '-X', method, '-w', '\n%{http_code}', `${SERVER_URL}${path}`];
    if (call.token) argv.push('-H', `authorization: Bearer ${call.token}`);
    if (call.body !== undefined) argv.push('-H', 'content-type: application/json', '--data-binary', '@-');
    const out = await runOk(argv, { ns: options.apiNs, timeoutMs: 70_000, input: call.body === undefined ? '' : JSON.stringify(call.body) });
    const cut = out.lastIndexOf('\n');
    const text = out.slice(0, cut);
    return { status: Number(out.slice(cut + 1)), body: text ? JSON.parse(text) : null };
  };
  return { dataDir, admin, api };
}

export interface LabTenant {
  customerId: string;
  token: string;
}

/**
 * A tenant for the run, its own networks (the office, and the internet's organizations: what
 * investigations name as destinations), and a client with the scopes the lab reads and provisions with.
 */
export async function createTenant(server: LabServer, runId: string, dir: string): Promise<LabTenant> {
  const tenant = await server.admin(['tenant', 'create', '--name', `Lab office ${runId}`, '--handle', `lab_${runId}`]);
  const networks = join(dir, 'networks.csv');
  writeFileSync(networks, labNetworks());
  await server.admin(['networks', 'import', '--customer', tenant.customer_id, '--file', networks]);
  const client = await server.admin([
    'client',
    'create',
    '--customer',
    tenant.customer_id,
    '--scopes',
    'p.token.scope.node_api,p.token.scope.search_api,p.token.scope.deployment_api',
    '--description',
    'lab',
  ]);
  const token = await server.api('POST', '/rest/oauth2/token/1.0', { body: { client_id: client.client_id, client_secret: client.client_secret } });
  if (token.status !== 200) throw new Error(`token: ${token.status} ${JSON.stringify(token.body)}`);
  return { customerId: tenant.customer_id, token: token.body.access_token };
}

/** A one-time access key for a collector with this machine id. */
export async function provisionCollector(server: LabServer, tenant: LabTenant, machineId: string): Promise<string> {
  const res = await server.api('POST', '/rest/nodes/provision/1.0', {
    token: tenant.token,
    body: { customer_id: tenant.customerId, machine_id: machineId, description: `lab ${machineId}` },
  });
  if (res.status !== 201) throw new Error(`provision ${machineId}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.access_key;
}
