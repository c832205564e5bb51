// The Debian packages the lab runs, found by their programs; missing ones are installed with apt
// when the lab runs as root (it must anyway, for namespaces), else named for the operator.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './proc.js';

/** Program → the Debian package that ships it. */
export const LAB_PACKAGES: Record<string, string> = {
  ip: 'iproute2',
  tcpdump: 'tcpdump',
  softflowd: 'softflowd',
  dnsmasq: 'dnsmasq-base',
  iodined: 'iodine',
  sshd: 'openssh-server',
  ssh: 'openssh-client',
  curl: 'curl',
  dig: 'dnsutils',
  nmap: 'nmap',
  hydra: 'hydra',
  openssl: 'openssl',
  ping: 'iputils-ping',
};

const SEARCH = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'];
const installed = (program: string) => SEARCH.some((dir) => dir && existsSync(join(dir, program)));

export function missingPackages(): string[] {
  return [
    ...new Set(
      Object.entries(LAB_PACKAGES)
        .filter(([program]) => !installed(program))
        .map(([, pkg]) => pkg),
    ),
  ];
}

/** Installs what is missing (bounded: 10 minutes); throws with the command to run otherwise. */
export async function ensurePackages(log: (line: string) => void): Promise<void> {
  const missing = missingPackages();
  if (missing.length === 0) return;
  const command = `apt-get update && apt-get install -y ${missing.join(' ')}`;
  if (process.getuid?.() !== 0) throw new Error(`the lab needs Debian packages it cannot install without root: ${command}`);
  log(`installing ${missing.join(' ')}`);
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  for (const argv of [
    ['apt-get', 'update', '-qq'],
    ['apt-get', 'install', '-y', '-qq', ...missing],
  ]) {
    const result = await run(argv, { timeoutMs: 600_000, env });
    if (result.code !== 0) throw new Error(`${argv.join(' ')} failed (${result.code}); install them yourself: ${command}\n${result.stderr.slice(-2000)}`);
  }
}
