import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './embedded-postgres.js';

/**
 * What another local user does to reach the embedded database: read the owner file, connect to
 * the port it names (the old door: loopback TCP, user `postgres`, no password), or else to the
 * socket. Printed as JSON: which steps worked.
 */
const attack = `
const { readFileSync } = require('node:fs');
const net = require('node:net');
const [dataDir] = process.argv.slice(1);
const out = {};
let owner = {};
try { owner = JSON.parse(readFileSync(dataDir + '/postgres.owner.json', 'utf8')); out.ownerFile = 'read'; } catch (e) { out.ownerFile = e.code; }
const target = owner.port ? { port: owner.port, host: '127.0.0.1' } : { path: dataDir + '/.s.PGSQL.5432' };
const socket = net.connect(target);
socket.on('connect', () => { out.connect = 'connected'; console.log(JSON.stringify(out)); process.exit(0); });
socket.on('error', (e) => { out.connect = e.code; console.log(JSON.stringify(out)); process.exit(0); });
`;

const NOBODY = 65534;
const mode = (path: string) => statSync(path).mode & 0o777;

describe('embedded PostgreSQL: reachable by the service user only', () => {
  let parent: string;
  let dataDir: string;
  let db: EmbeddedPostgres;

  beforeAll(async () => {
    // Under /tmp itself, not the test run's 0700 directory: the only fence is the one under test.
    parent = mkdtempSync('/tmp/bd-pg-');
    chmodSync(parent, 0o755);
    dataDir = join(parent, 'data');
    db = await startEmbeddedPostgres(dataDir);
  });
  afterAll(async () => {
    await db?.close();
    rmSync(parent, { recursive: true, force: true });
  });

  it('serves a 0600 Unix socket in a 0700 DATA_DIR, and its owner file is 0600 and names no port', async () => {
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(dataDir, '.s.PGSQL.5432'))).toBe(0o600);
    expect(mode(join(dataDir, 'postgres.owner.json'))).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dataDir, 'postgres.owner.json'), 'utf8'))).toEqual({ pid: process.pid });
    expect(db.url).not.toMatch(/127\.0\.0\.1|:\d+\//);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await client.end();
  });

  it.runIf(process.getuid?.() === 0)('turns away another local user: the owner file and the socket both refuse it', async () => {
    const result = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['-e', attack, dataDir], { uid: NOBODY, gid: NOBODY, cwd: '/', timeout: 20_000 }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    expect(JSON.parse(result)).toEqual({ ownerFile: 'EACCES', connect: 'EACCES' });
  });

  it('refuses a DATA_DIR too long for a socket path, saying what to change', async () => {
    const deep = join(parent, 'd'.repeat(100));
    await expect(startEmbeddedPostgres(deep)).rejects.toThrow(
      /DATA_DIR .* is too long for the embedded database's socket .*choose a shorter DATA_DIR or set DATABASE_URL/,
    );
  });
});
