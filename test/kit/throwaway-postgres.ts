import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** The PostgreSQL server a test run (or a benchmark built on the test kit) uses. */
export interface TestPostgres {
  url: string;
  /** Stops a throwaway server and removes its directory; safe to call more than once. */
  stop: () => void;
}

const DEBIAN_SERVERS = '/usr/lib/postgresql';
const START_ATTEMPTS = 3;

/**
 * Where initdb and pg_ctl are: on PATH, or the newest of Debian's servers, which it keeps off PATH.
 */
function serverBinDir(): string {
  const onPath = (process.env.PATH ?? '').split(delimiter).find((dir) => dir !== '' && existsSync(join(dir, 'initdb')));
  if (onPath) return onPath;
  const versions = existsSync(DEBIAN_SERVERS) ? readdirSync(DEBIAN_SERVERS).filter((v) => existsSync(join(DEBIAN_SERVERS, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest)
    throw new Error(
      "PostgreSQL server programs (initdb, pg_ctl) not found: run test/kit/ensure-test-tools.sh (it installs Debian's postgresql) or set TEST_DATABASE_URL",
    );
  return join(DEBIAN_SERVERS, newest, 'bin');
}

/** initdb and postgres refuse to run as root: as root the cluster belongs to the `postgres` user. */
function clusterOwner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      "running as root and there is no `postgres` user to own the tests' PostgreSQL cluster (initdb refuses root): create one, run as another user, or set TEST_DATABASE_URL",
    );
  }
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * TEST_DATABASE_URL when given, otherwise a throwaway cluster; TEST_DATABASE_URL names the server
 * afterwards, for the code and the worker processes that read it.
 */
export async function testPostgres(): Promise<TestPostgres> {
  const given = process.env.TEST_DATABASE_URL;
  const server = given ? { url: given, stop: () => undefined } : await startThrowawayPostgres();
  process.env.TEST_DATABASE_URL = server.url;
  return server;
}

/**
 * initdb into a new temporary directory and start the server on a free loopback port with a
 * random password; nothing of the machine's own PostgreSQL (clusters, users, passwords) is used.
 */
export async function startThrowawayPostgres(): Promise<TestPostgres> {
  const bin = serverBinDir();
  const owner = clusterOwner();
  const dir = mkdtempSync(join(tmpdir(), 'bd-test-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const run = (program: string, args: string[]) => {
    const path = join(bin, program);
    const [file, argv] = owner ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
    try {
      execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
    } catch (error) {
      throw new Error(`${program} failed: ${String((error as { stderr?: Buffer }).stderr ?? (error as Error).message).trim()}`);
    }
  };

  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stop);
    if (existsSync(join(data, 'postmaster.pid'))) {
      try {
        run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
      } catch {
        // Removing the directory below still takes the data away; a server left running is in the log.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Vitest exits the process on SIGINT and SIGTERM, so this also covers an interrupted run.
  process.on('exit', stop);

  try {
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const password = randomBytes(18).toString('hex');
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, password, { mode: 0o600 });
    if (owner) chownSync(passwordFile, owner.uid, owner.gid);
    // C.UTF-8 and UTF8 as Debian's own clusters have them, so text behaves as on a developer's server.
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C.UTF-8']);
    rmSync(passwordFile);
    // TCP on loopback only and no Unix socket, so nothing is created outside the directory; no
    // fsync, because a cluster removed after the run has nothing to keep across a crash.
    appendFileSync(join(data, 'postgresql.conf'), "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\nfsync = off\n");
    const port = await startOnFreePort(run, data, log);
    return { url: `postgresql://postgres:${password}@127.0.0.1:${port}/postgres`, stop };
  } catch (error) {
    const serverLog = existsSync(log) ? `\n${readFileSync(log, 'utf8').trim().split('\n').slice(-10).join('\n')}` : '';
    stop();
    throw new Error(`could not start the tests' PostgreSQL: ${(error as Error).message}${serverLog}`);
  }
}

/** Another process may take the free port before the server binds it: then try another one. */
async function startOnFreePort(run: (program: string, args: string[]) => void, data: string, log: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await freeLoopbackPort();
    try {
      run('pg_ctl', ['start', '-w', '-t', '60', '-D', data, '-l', log, '-o', `-p ${port}`]);
      return port;
    } catch (error) {
      if (attempt === START_ATTEMPTS) throw error;
    }
  }
}
