// Benign traffic that runs on a clock: NTP polling, the EDR agent's
// heartbeat, the nightly backup. Real networks are full of such metronomes;
// they are why a beacon detector must also ask how many hosts share the
// rhythm and how rare the destination is (docs/flowgen.md).

import { egressSpec } from './egress.js';
import { DAY_MS, HOUR_MS } from '../diurnal.js';
import type { InternalHost } from '../endpoints.js';
import { MinHeap } from '../heap.js';
import type { Prng } from '../prng.js';
import { buildRecord, type FlowSpec } from '../record.js';
import type { FlowSource } from '../source.js';
import type { FlowRecord } from '../types.js';
import { org, serviceOf, type World } from '../world.js';

export const SCHEDULES = {
  /** chrony's default maximum poll interval: 2^10 s. */
  ntpPeriodSecs: 1024,
  /** The PDC emulator syncs with time.windows.com hourly. */
  windowsTimePeriodSecs: 3600,
  heartbeatPeriodSecs: 300,
  heartbeatJitter: 0.01,
  /** Local hour the nightly backup starts. */
  backupHour: 2,
  backupChunks: [12, 20],
  backupChunkMedianBytes: 180 * 1024 * 1024,
} as const;

type TimerKind = 'ntp' | 'windows-time' | 'heartbeat' | 'backup';

interface Timer {
  time: number;
  id: number;
  kind: TimerKind;
  host: InternalHost;
  chunksLeft: number;
}

export class ScheduledTraffic implements FlowSource {
  private readonly heap = new MinHeap<Timer>();
  private readonly endMs: number;
  private readonly make: Record<TimerKind, (ts: number, timer: Timer) => FlowSpec>;

  constructor(
    private readonly world: World,
    private readonly rng: Prng,
  ) {
    const { startMs, endMs } = world.options;
    this.endMs = endMs;
    const net = world.network;
    let id = 0;
    const add = (kind: TimerKind, host: InternalHost, firstAt: number) => this.heap.push({ time: firstAt, id: id++, kind, host, chunksLeft: 0 });

    for (const host of net.managed) add('heartbeat', host, startMs + rng.next() * SCHEDULES.heartbeatPeriodSecs * 1000);
    for (const host of net.managed) {
      if (host.os === 'linux') add('ntp', host, startMs + rng.next() * SCHEDULES.ntpPeriodSecs * 1000);
    }
    add('windows-time', net.resolvers[0], startMs + rng.next() * SCHEDULES.windowsTimePeriodSecs * 1000);
    add('backup', net.backup, this.nextBackupStart(startMs));

    const canonical = org(world, 'Canonical Group Limited');
    const microsoft = org(world, 'Microsoft Corporation');
    const crowdstrike = org(world, 'CrowdStrike, Inc.');
    const amazon = org(world, 'Amazon.com, Inc.');
    const ntp = serviceOf(canonical, 'NTP');
    const windowsTime = serviceOf(microsoft, 'NTP');
    const heartbeat = serviceOf(crowdstrike, 'HTTPS');
    const s3 = serviceOf(amazon, 'HTTPS', 'download');
    this.make = {
      ntp: (ts, t) => egressSpec(ts, t.host, canonical, ntp, rng, 'chronyd'),
      'windows-time': (ts, t) => egressSpec(ts, t.host, microsoft, windowsTime, rng, 'svchost.exe'),
      heartbeat: (ts, t) => egressSpec(ts, t.host, crowdstrike, heartbeat, rng),
      backup: (ts, t) => {
        const spec = egressSpec(ts, t.host, amazon, s3, rng, 'restic');
        spec.up = Math.min(400 * 1024 * 1024, Math.round(rng.logNormal(SCHEDULES.backupChunkMedianBytes, 0.4)));
        spec.down = Math.round(rng.logNormal(24 * 1024, 0.3));
        spec.durationSecs = Math.round((spec.up / rng.between(8e6, 20e6)) * 1e3) / 1e3;
        spec.ongoing = false;
        spec.dstFqdn = 'examplecorp-backup.s3.amazonaws.com';
        spec.gapCv = 0.4;
        return spec;
      },
    };
  }

  peek(): number {
    const top = this.heap.peek();
    if (top === undefined) return Infinity;
    const ts = Math.floor(top.time);
    return ts >= this.endMs ? Infinity : ts;
  }

  emit(): FlowRecord {
    const timer = this.heap.pop()!;
    const ts = Math.floor(timer.time);
    const spec = this.make[timer.kind](ts, timer);
    this.reschedule(timer, spec);
    return buildRecord(spec, this.world.record, this.rng);
  }

  private reschedule(timer: Timer, spec: FlowSpec): void {
    const rng = this.rng;
    switch (timer.kind) {
      case 'heartbeat':
        timer.time += SCHEDULES.heartbeatPeriodSecs * 1000 * (1 + SCHEDULES.heartbeatJitter * (2 * rng.next() - 1));
        break;
      case 'ntp':
        timer.time += SCHEDULES.ntpPeriodSecs * 1000 + rng.between(-20, 20);
        break;
      case 'windows-time':
        timer.time += SCHEDULES.windowsTimePeriodSecs * 1000 + rng.between(-50, 50);
        break;
      case 'backup':
        if (timer.chunksLeft === 0) timer.chunksLeft = rng.intBetween(SCHEDULES.backupChunks[0], SCHEDULES.backupChunks[1]);
        timer.chunksLeft--;
        timer.time = timer.chunksLeft > 0 ? timer.time + spec.durationSecs * 1000 + rng.between(200, 2000) : this.nextBackupStart(timer.time + HOUR_MS);
        break;
    }
    this.heap.push(timer);
  }

  /** The first backup start (local 02:00 plus a few minutes) at or after t. */
  private nextBackupStart(t: number): number {
    const offset = this.world.options.network.utcOffsetMinutes * 60_000;
    const localMidnight = Math.floor((t + offset) / DAY_MS) * DAY_MS - offset;
    let start = localMidnight + SCHEDULES.backupHour * HOUR_MS + this.rng.between(0, 5 * 60_000);
    if (start < t) start += DAY_MS;
    return start;
  }
}
