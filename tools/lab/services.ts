// The services the lab's traffic talks to, each a daemon inside its namespace: the internet's DNS
// (dnsmasq, with the web servers' names and the tunnel zone delegated to iodined), the web sites
// (one node process, HTTP and HTTPS on every site's address), iodined, and sshd on the office's
// file server. Every daemon is tracked by the cleanup stack.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Cleanup, type Daemon, runOk, startDaemon, waitForOutput, waitUntil, run } from './proc.js';
import { INTERNET, type Namespaces, OFFICE_HOSTS, webServers } from './topology.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WEB_SERVER = fileURLToPath(new URL('./web-server.ts', import.meta.url));

/** iodine's shared secret and tunnel network (inside the namespaces only). */
export const TUNNEL = { password: 'lab-tunnel', serverIp: '172.30.99.1', prefix: 27 };
export const FILE_SERVER = OFFICE_HOSTS.find((h) => h.role === 'server')!;

export interface LabFiles {
  dir: string;
  /** The web sites' certificate, which the office hosts' curl trusts. */
  caCert: string;
  /** The admin's ssh key (its public half is the file server's authorized key). */
  sshKey: string;
}

/** A self-signed certificate for every web server name, and the admin's ssh key pair. */
export async function makeCredentials(dir: string): Promise<LabFiles> {
  const caCert = join(dir, 'web.crt');
  const names = webServers()
    .map((s) => `DNS:${s.name}`)
    .join(',');
  await runOk(
    [
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=lab web',
      '-addext',
      `subjectAltName=${names}`,
      '-keyout',
      join(dir, 'web.key'),
      '-out',
      caCert,
    ],
    { timeoutMs: 20_000 },
  );
  const sshKey = join(dir, 'admin_ed25519');
  await runOk(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'lab admin', '-f', sshKey], { timeoutMs: 20_000 });
  await runOk(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'ssh_host_ed25519_key')], { timeoutMs: 20_000 });
  return { dir, caCert, sshKey };
}

const daemon = (cleanup: Cleanup, files: LabFiles, name: string, argv: string[], ns: string, env?: Record<string, string>) =>
  cleanup.daemon(startDaemon(name, argv, { ns, logFile: join(files.dir, `${name}.log`), cwd: REPO_ROOT, env }));

/** Starts every service and waits until each answers (bounded). */
export async function startServices(names: Namespaces, files: LabFiles, cleanup: Cleanup): Promise<void> {
  const dnsmasq = daemon(
    cleanup,
    files,
    'dnsmasq',
    [
      'dnsmasq',
      '--keep-in-foreground',
      '--log-facility=-',
      '--conf-file=/dev/null',
      '--no-resolv',
      '--no-hosts',
      '--bind-interfaces',
      `--listen-address=${INTERNET.dns.ip}`,
      `--pid-file=${join(files.dir, 'dnsmasq.pid')}`,
      '--user=root',
      ...webServers().map((s) => `--host-record=${s.name},${s.ip}`),
      `--server=/${INTERNET.tunnelDomain}/${INTERNET.tunnelDns}`,
    ],
    names.inet,
  );
  const iodined = daemon(
    cleanup,
    files,
    'iodined',
    ['iodined', '-f', '-c', '-l', INTERNET.tunnelDns, '-p', '53', '-P', TUNNEL.password, `${TUNNEL.serverIp}/${TUNNEL.prefix}`, INTERNET.tunnelDomain],
    names.inet,
  );
  const web = daemon(
    cleanup,
    files,
    'web',
    [process.execPath, '--import', 'tsx', WEB_SERVER, files.caCert, join(files.dir, 'web.key'), ...webServers().map((s) => s.ip)],
    names.inet,
  );
  const sshd = startSshd(names, files, cleanup);

  await Promise.all([
    waitForOutput(web, /^ready$/m, 30_000),
    waitForOutput(iodined, /Listening to dns/, 10_000),
    waitUntil(
      'dnsmasq answers',
      async () =>
        (
          await run(['dig', '+short', '+time=1', '+tries=1', `@${INTERNET.dns.ip}`, INTERNET.sites[0].name], { ns: names.inet, timeoutMs: 3_000 })
        ).stdout.trim() === INTERNET.sites[0].ip,
      10_000,
    ),
    waitUntil(
      'sshd listens',
      async () => (await run(['ss', '-Htln', `sport = :22`], { ns: names.hosts[FILE_SERVER.name], timeoutMs: 3_000 })).stdout.includes(':22'),
      10_000,
    ),
  ]).catch((error: Error) => {
    throw new Error(`${error.message}\n(dnsmasq: ${dnsmasq.output().slice(-500)}) (sshd: ${sshd.output().slice(-500)})`);
  });
}

/** OpenSSH's sshd on the file server: the admin's key for root, passwords allowed (hydra's target). */
function startSshd(names: Namespaces, files: LabFiles, cleanup: Cleanup): Daemon {
  const config = join(files.dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `ListenAddress ${FILE_SERVER.ip}`,
      `HostKey ${join(files.dir, 'ssh_host_ed25519_key')}`,
      `AuthorizedKeysFile ${files.sshKey}.pub`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication yes',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      // The key lives in the lab's temporary directory under /tmp (world-writable): skip the owner checks.
      'StrictModes no',
      'PidFile none',
      '',
    ].join('\n'),
  );
  // sshd refuses to start without its privilege-separation directory.
  return daemon(cleanup, files, 'sshd', ['sh', '-c', `mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e -f ${config}`], names.hosts[FILE_SERVER.name]);
}
