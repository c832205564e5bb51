/**
 * `npm run bench:meter [-- PACKETS] [--rounds N | --instructions [--encrypted]]`: packets/s and flows/s of the packet meter (capture file →
 * decode → flow table, `CaptureMeter`) beside softflowd metering the same file in the same run.
 *
 * The file is real traffic replayed: tcpdump (snap length 128, as flow meters capture) records a
 * few TCP conversations and UDP exchanges of this run on lo; their frames are copied into groups
 * of 1,000 concurrent replicas, each replica with its own client (10.g.r.r) and server
 * (198.18.r.r, the benchmarking range) and the checksums adjusted, groups 40 s apart so that
 * idle flows expire between them. Rates are per CPU second (user + system, the garbage
 * collector's helper threads included), for softflowd as /usr/bin/time reports it. The file is
 * read once before either is timed, so both read it from the page cache: what is timed is
 * metering, not the disk. Like softflowd, the meter runs in a process of its own (this script
 * with --meter-file), so it starts with a clean heap rather than the one that wrote the file; it
 * meters as the collector's CLI does (its Node flags, payload inspectors on), and reports its peak RSS and the
 * peak heap and active flows sampled at every batch it hands over. It then meters the file again
 * in the same process and prints that warm rate too: a first run also pays V8 for compiling the
 * meter (about a fifth of its CPU, docs/meter.md), which a collector metering for hours pays once.
 * The goal is read on the first run, with the meter handing over records. Then the same replay
 * with every payload pseudo-random and kept to 400 bytes (ciphertext, as a live capture of TLS
 * gives the meter's payload entropy 256 bytes of it) is metered and timed beside softflowd on
 * that file: the `encrypted:` line. A fourth process meters the main file as the collector does
 * by default, its flows written as Native rows (the `collector:` line). Last, softflowd exports
 * the same capture as IPFIX, and the export decoder's records/s over those datagrams is printed.
 * softflowd runs just before and just after the meter's first run, and the ratio is read against
 * the mean of the two. With `--rounds N` (1 to 20), the first-run ratio is measured N times, each
 * round a new meter process between two softflowd runs, and its median printed: on a shared
 * machine one round's ratio moves by ±15% or more.
 *
 * With `--instructions`, nothing is timed: the meter's child and softflowd run under valgrind's
 * cachegrind, which counts every instruction a process runs (the JIT's code and V8's helper
 * threads included), and the bench prints the meter's instructions for a first run and a warm
 * one, its startup subtracted. Identical runs differ by about 3%, against ±15% for CPU seconds,
 * so two versions of the meter are compared by running this on each (docs/meter.md). About 60×
 * slower than the run it counts: 200,000 packets take a few minutes. With `--encrypted` it counts
 * on the ciphertext replay instead, where payload entropy weighs most.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { ExportDecoder } from '../collector/exports/decode.js';
import { inspectPayload } from '../collector/meter/app/index.js';
import { CaptureReader } from '../collector/meter/capture.js';
import { CaptureMeter, type MeterStats } from '../collector/meter/meter-capture.js';
import type { CapturedFrame } from '../collector/meter/packet.js';
import { listenOnLoopback, startTcpdump } from '../collector/meter/testing/tcpdump.js';
import { writePcap } from '../collector/meter/testing/write-capture.js';
import { COLLECTOR_NODE_FLAGS } from '../collector/node-flags.js';
import { softflowdExport } from '../collector/testing/softflowd.js';
import { statCpuSeconds } from './processes.js';
import { median } from './stats.js';

const run = promisify(execFile);
const METER_FILE = '--meter-file';
const NATIVE = '--native';
/** The child meters the file once: no warm run. */
const FIRST_ONLY = '--first-only';
const MAX_ROUNDS = 20;
const REPLICAS_PER_GROUP = 1000;
const GROUP_GAP_MICROS = 40e6;
const ETHERNET = 14;

/** The main replay's snap length, as flow meters capture. */
const SNAPLEN = 128;
/**
 * The template's: the ciphertext replay keeps this much of each frame, so that a payload gives
 * the meter's entropy the 256 bytes it samples, as a live capture (snap length 65,535) of a TLS
 * link does.
 */
const CIPHERTEXT_SNAPLEN = 400;

/** A real capture of this run's loopback traffic: TCP conversations of several sizes, UDP exchanges. */
async function captureTemplate(): Promise<{ frames: CapturedFrame[]; serverPorts: Set<number> }> {
  const peers = await listenOnLoopback('127.0.0.1');
  const capture = await startTcpdump({ iface: 'lo', filter: `port ${peers.tcpPort} or port ${peers.udpPort}`, args: ['-s', String(CIPHERTEXT_SNAPLEN)] });
  const traffic = async () => {
    for (const size of [300, 1500, 6000, 20000]) await peers.exchangeTcp('GET /'.padEnd(200, 'x'), 'y'.repeat(size));
    await peers.sendUdp([60, 120, 300, 60]);
  };
  const made = await traffic().then(
    () => undefined,
    (error: unknown) => error,
  );
  const { bytes } = await capture.stop();
  await peers.close();
  if (made !== undefined) throw made;
  return { frames: new CaptureReader().push(bytes), serverPorts: new Set([peers.tcpPort, peers.udpPort]) };
}

/** RFC 1624: the one's complement checksum at `at` after a 16-bit word changed from `old` to `now`. */
function adjustChecksum(data: Uint8Array, at: number, old: number, now: number): void {
  const checksum = (data[at] << 8) | data[at + 1];
  let sum = (~checksum & 0xffff) + (~old & 0xffff) + now;
  sum = (sum & 0xffff) + (sum >>> 16);
  sum = (sum & 0xffff) + (sum >>> 16);
  const next = ~sum & 0xffff;
  data[at] = next >> 8;
  data[at + 1] = next & 0xff;
}

/** Where a template frame's transport header starts, and its checksum's offset (-1: none, a UDP checksum of 0). */
function transportOf(data: Uint8Array): { l4: number; protocol: number; checksumAt: number } {
  const l4 = ETHERNET + (data[ETHERNET] & 0x0f) * 4;
  const protocol = data[ETHERNET + 9];
  const checksumAt = protocol === 6 ? l4 + 16 : protocol === 17 && ((data[l4 + 6] << 8) | data[l4 + 7]) !== 0 ? l4 + 6 : -1;
  return { l4, protocol, checksumAt: checksumAt + 2 <= data.length ? checksumAt : -1 };
}

/** The 16-bit word at `at` set to `now`, the checksums at `checksums` (-1: none) adjusted for it. */
function setWord(data: Uint8Array, at: number, now: number, ...checksums: number[]): void {
  const old = (data[at] << 8) | data[at + 1];
  data[at] = now >> 8;
  data[at + 1] = now & 0xff;
  for (const checksum of checksums) if (checksum >= 0) adjustChecksum(data, checksum, old, now);
}

/** The frame's IPv4 addresses replaced (client or server end by the port it uses), checksums kept right; in place. */
function readdress(data: Uint8Array, serverPorts: Set<number>, client: number[], server: number[]): void {
  const { l4, checksumAt } = transportOf(data);
  const fromServer = serverPorts.has((data[l4] << 8) | data[l4 + 1]);
  const [src, dst] = fromServer ? [server, client] : [client, server];
  const next = [...src, ...dst];
  for (let word = 0; word < 4; word++) setWord(data, ETHERNET + 12 + word * 2, (next[word * 2] << 8) | next[word * 2 + 1], ETHERNET + 10, checksumAt);
}

/** xorshift32: the same pseudo-random words every run. */
function pseudoRandom(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

/**
 * The frame's captured payload replaced by pseudo-random bytes, as TLS records look on the wire,
 * the transport checksum adjusted word by word; in place. An odd last byte is left as it was.
 */
function encipher(data: Uint8Array, random: () => number): void {
  const { l4, protocol, checksumAt } = transportOf(data);
  if (protocol !== 6 && protocol !== 17) return;
  const start = protocol === 6 ? l4 + (data[l4 + 12] >> 4) * 4 : l4 + 8;
  const end = Math.min(data.length, ETHERNET + ((data[ETHERNET + 2] << 8) | data[ETHERNET + 3]));
  for (let at = start; at + 1 < end; at += 2) setWord(data, at, random() & 0xffff, checksumAt);
}

/** What a replay's frames carry: the template's payloads cut at SNAPLEN, or pseudo-random ones kept to CIPHERTEXT_SNAPLEN. */
type Payloads = 'template' | 'ciphertext';

/** Writes ≥ targetPackets replayed frames; returns how many. */
function writeReplay(path: string, template: CapturedFrame[], serverPorts: Set<number>, targetPackets: number, payloads: Payloads): number {
  const start = template[0].tsMicros;
  const span = template[template.length - 1].tsMicros - start;
  // Template frame j of replica r lands at j·slot + r µs in its group: replicas interleave in time order.
  const slot = REPLICAS_PER_GROUP;
  const groups = Math.ceil(targetPackets / (template.length * REPLICAS_PER_GROUP));
  const linkType = template[0].linkType;
  const snaplen = payloads === 'ciphertext' ? CIPHERTEXT_SNAPLEN : SNAPLEN;
  const random = pseudoRandom(0x5eed);
  const fd = openSync(path, 'w');
  let written = 0;
  try {
    writeSync(fd, writePcap([], { linkType }));
    for (let g = 0; g < groups; g++) {
      const groupStart = start + g * (template.length * slot + span + GROUP_GAP_MICROS);
      const frames: CapturedFrame[] = [];
      template.forEach((frame, j) => {
        for (let r = 0; r < REPLICAS_PER_GROUP; r++) {
          const data = frame.data.slice(0, snaplen);
          readdress(data, serverPorts, [10, g & 255, r >> 8, r & 255], [198, 18, r >> 8, r & 255]);
          if (payloads === 'ciphertext') encipher(data, random);
          frames.push({ ...frame, data, tsMicros: groupStart + j * slot + r });
        }
      });
      writeSync(fd, writePcap(frames, { linkType }).subarray(24)); // the records, without a second file header
      written += frames.length;
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

type Peak = { heapBytes: number; rssBytes: number; activeFlows: number };

/**
 * Meters the file once with a new meter, as the CLI does; CPU and wall time of the run, peaks into
 * `peak`. With `native`, the sink takes Native rows, as the collector's queue does by default
 * (docs/reference-collector.md); else records, the meter's own hand-over.
 */
async function meterOnce(path: string, peak: Peak, native: boolean) {
  let records = 0;
  const meter: CaptureMeter = new CaptureMeter(
    {
      customerId: 'bench',
      sensor: { id: 'bench', type: 'packet', name: 'bench', hostname: 'bench', interface: 'pcap' },
      tags: [],
      batchFlows: 2000,
      inspectors: [inspectPayload],
    },
    {
      push: async (flows) => took(flows.length),
      pushNative: native ? async (_block, rows) => took(rows) : undefined,
    },
  );
  const took = (flows: number) => {
    records += flows;
    const memory = process.memoryUsage();
    peak.heapBytes = Math.max(peak.heapBytes, memory.heapUsed);
    peak.rssBytes = Math.max(peak.rssBytes, memory.rss);
    peak.activeFlows = Math.max(peak.activeFlows, meter.stats().active_flows);
  };
  const cpu = process.cpuUsage();
  const mainThread = mainThreadCpuSecs();
  const wall = performance.now();
  await meter.run([path], new AbortController().signal);
  const used = process.cpuUsage(cpu);
  return {
    stats: meter.stats(),
    records,
    cpuSecs: (used.user + used.system) / 1e6,
    mainThreadSecs: mainThreadCpuSecs() - mainThread,
    wallSecs: (performance.now() - wall) / 1000,
  };
}

/**
 * CPU seconds of this process's main thread (Linux, in clock ticks of 10 ms). The rest of the
 * process's CPU is on V8's helper threads: the optimising compiler and the garbage collector's.
 */
const mainThreadCpuSecs = (): number => statCpuSeconds(`/proc/self/task/${process.pid}/stat`);

/**
 * The child's side: meters the file, then again in the same process (the code V8 compiled during
 * the first run now warm, as in a collector that has metered for a while), and prints what it
 * measured as JSON.
 */
async function meterFile(path: string, native: boolean, firstOnly: boolean): Promise<void> {
  const peak: Peak = { heapBytes: 0, rssBytes: 0, activeFlows: 0 };
  const first = await meterOnce(path, peak, native);
  const warm = firstOnly ? first : await meterOnce(path, peak, native);
  peak.rssBytes = Math.max(peak.rssBytes, process.resourceUsage().maxRSS * 1024);
  process.stdout.write(JSON.stringify({ ...first, peak, warmCpuSecs: warm.cpuSecs }));
}

/** The arguments that run this script as the meter's child: execArgv carries tsx's loader, so the child runs this same TypeScript file, with the collector's Node flags. */
const childArgs = (path: string, ...flags: string[]): string[] => [...COLLECTOR_NODE_FLAGS, ...process.execArgv, process.argv[1], METER_FILE, path, ...flags];

async function meterInChild(path: string, native = false) {
  const args = childArgs(path, ...(native ? [NATIVE] : []));
  const { stdout } = await run(process.execPath, args, {
    timeout: 300_000,
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout) as {
    stats: MeterStats;
    records: number;
    peak: Peak;
    cpuSecs: number;
    mainThreadSecs: number;
    wallSecs: number;
    warmCpuSecs: number;
  };
}

/** softflowd's arguments: the file read in the foreground (-d), no control socket (with one, 1.1.0 waits on accept), NetFlow v5 to `port` on loopback. */
function softflowdArgs(path: string, dir: string, port: number): string[] {
  const args = ['-r', path, '-n', `127.0.0.1:${port}`, '-d', '-c', 'none', '-p', join(dir, 'softflowd.pid'), '-m', '100000'];
  for (const timeout of ['tcp=30', 'udp=30', 'icmp=30', 'general=30', 'maxlife=300']) args.push('-t', timeout);
  return args;
}

async function softflowd(path: string, dir: string) {
  const sink = createSocket('udp4');
  // A v5 header's flow sequence (the flows sent before it) plus its record count: the flows softflowd
  // exported up to the last datagram received. This socket's buffer (the kernel caps it at 208 KiB)
  // drops datagrams of the burst at the end of the file: counting records read 67,000 to 168,000
  // of 207,000; this reads all but the last few datagrams' at worst.
  let exported = 0;
  sink.on('message', (message) => (exported = Math.max(exported, message.readUInt32BE(16) + message.readUInt16BE(2))));
  await new Promise<void>((resolve) => sink.bind(0, '127.0.0.1', resolve));
  try {
    const { stderr } = await run('/usr/bin/time', ['-f', '%e %U %S %M', 'softflowd', ...softflowdArgs(path, dir, sink.address().port)], { timeout: 300_000 });
    const [wallSecs, user, system, maxRssKiB] = stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the last export datagrams
    return { cpuSecs: user + system, wallSecs, exported, rssBytes: maxRssKiB * 1024 };
  } finally {
    sink.close();
  }
}

/**
 * The meter in its child between two runs of softflowd, whose mean CPU is the reference: this
 * machine's speed moves by half within a minute, and a reference taken on both sides of the
 * meter's run follows it, where one taken after it alone put rounds of one version 0.32× to 0.71×.
 */
async function bracketed(path: string, dir: string) {
  const first = await softflowd(path, dir);
  const ours = await meterInChild(path);
  const second = await softflowd(path, dir);
  const theirs = { ...second, cpuSecs: (first.cpuSecs + second.cpuSecs) / 2 };
  return { ours, theirs, before: first.cpuSecs, after: second.cpuSecs };
}

/** The export decoder over datagrams received once: CPU seconds for the records they hold. */
function decodeExports(datagrams: readonly Buffer[], port: number): { records: number; cpuSecs: number } {
  const decoder = new ExportDecoder({ customerId: 'bench' });
  const cpu = process.cpuUsage();
  let records = 0;
  for (const datagram of datagrams) records += decoder.decode(datagram, '127.0.0.1', port).length;
  const used = process.cpuUsage(cpu);
  return { records, cpuSecs: (used.user + used.system) / 1e6 };
}

/** Instructions the command runs, every thread, counted by cachegrind. */
async function instructionsOf(command: string, args: readonly string[]): Promise<number> {
  const { stderr } = await run('valgrind', ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', command, ...args], {
    timeout: 3_600_000,
    maxBuffer: 1 << 24,
  });
  const counted = /I\s+refs:\s+([\d,]+)/.exec(stderr);
  if (counted === null) throw new Error(`cachegrind printed no instruction count:\n${stderr.slice(-2000)}`);
  return Number(counted[1].replaceAll(',', ''));
}

/** The meter's instructions for a first and a warm run of the file, and softflowd's, each process on its own. */
async function countInstructions(path: string, dir: string, packets: number, linkType: number): Promise<void> {
  const empty = join(dir, 'empty.pcap');
  writeFileSync(empty, writePcap([], { linkType }));
  // Two at a time: cachegrind runs a process's threads one by one, so each takes one core.
  const [startup, once] = await Promise.all([
    instructionsOf(process.execPath, childArgs(empty)),
    instructionsOf(process.execPath, childArgs(path, FIRST_ONLY)),
  ]);
  const [twice, theirs] = await Promise.all([instructionsOf(process.execPath, childArgs(path)), instructionsOf('softflowd', softflowdArgs(path, dir, 9))]);
  const millions = (n: number) => `${Math.round(n / 1e6).toLocaleString('en')} M`;
  const perPacket = (n: number) => `${(n / packets / 1000).toFixed(1)} k/packet`;
  console.log(`instructions (cachegrind, every thread; identical runs differ by about 3%):`);
  console.log(
    `meter:     first run ${millions(once - startup)} (${perPacket(once - startup)}), warm ${millions(twice - once)} (${perPacket(twice - once)}); startup ${millions(startup)} subtracted`,
  );
  console.log(
    `softflowd: ${millions(theirs)} (${perPacket(theirs)}), its start included; not a time ratio: its code and V8's differ in instructions per cycle`,
  );
}

async function compare({ packets: targetPackets, rounds, instructions, encrypted }: BenchOptions): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-meter-'));
  try {
    const { frames: template, serverPorts } = await captureTemplate();
    const path = join(dir, 'replay.pcap');
    const packets = writeReplay(path, template, serverPorts, targetPackets, encrypted ? 'ciphertext' : 'template');
    const payloads = encrypted ? `, payloads pseudo-random to ${CIPHERTEXT_SNAPLEN} bytes` : '';
    console.log(
      `capture: ${packets} packets (${template.length}-frame tcpdump template × replicas${payloads}), ${(statSync(path).size / 2 ** 20).toFixed(0)} MiB`,
    );
    readFileSync(path); // into the page cache, where softflowd will find it too
    if (instructions) return await countInstructions(path, dir, packets, template[0].linkType);

    const { ours, theirs, before, after } = await bracketed(path, dir);
    const rate = (n: number, secs: number) => Math.round(n / secs).toLocaleString('en');
    const dropped = Object.values(ours.stats.dropped).reduce((n, d) => n + Object.values(d).reduce((a, b) => a + b, 0), 0);
    const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
    console.log(
      `meter:     ${rate(packets, ours.cpuSecs)} packets/s, ${rate(ours.records, ours.cpuSecs)} flows/s CPU (${ours.cpuSecs.toFixed(2)} s CPU, ${ours.wallSecs.toFixed(2)} s wall; ${ours.records} flows, ${ours.stats.packets_decoded} decoded, ${dropped} dropped)`,
    );
    console.log(
      `           ${ours.mainThreadSecs.toFixed(2)} s of the CPU on the main thread, ${(ours.cpuSecs - ours.mainThreadSecs).toFixed(2)} s on V8's helper threads (compiling, collecting)`,
    );
    console.log(
      `           peak ${ours.peak.activeFlows} active flows, heap ${mib(ours.peak.heapBytes)}, RSS ${mib(ours.peak.rssBytes)} (its process, tsx included)`,
    );
    console.log(
      `softflowd: ${rate(packets, theirs.cpuSecs)} packets/s CPU (${theirs.cpuSecs.toFixed(2)} s CPU: ${before.toFixed(2)} s before the meter, ${after.toFixed(2)} s after; ${theirs.wallSecs.toFixed(2)} s wall; ${theirs.exported} flows exported; peak RSS ${mib(theirs.rssBytes)})`,
    );
    console.log(`ratio:     ${(theirs.cpuSecs / ours.cpuSecs).toFixed(2)}× softflowd's packets/s (goal ≥ 0.5×)`);
    if (rounds > 1) {
      const ratios = [theirs.cpuSecs / ours.cpuSecs];
      for (let round = 1; round < rounds; round++) {
        const next = await bracketed(path, dir);
        ratios.push(next.theirs.cpuSecs / next.ours.cpuSecs);
      }
      console.log(`           median of ${rounds} rounds ${median(ratios).toFixed(2)}× (${ratios.map((r) => r.toFixed(2)).join(', ')})`);
    }
    console.log(
      `warm:      ${rate(packets, ours.warmCpuSecs)} packets/s CPU (${ours.warmCpuSecs.toFixed(2)} s CPU: the same capture metered again in the process, its code compiled), ${(theirs.cpuSecs / ours.warmCpuSecs).toFixed(2)}× softflowd's`,
    );

    const cipherPath = join(dir, 'ciphertext.pcap');
    writeReplay(cipherPath, template, serverPorts, targetPackets, 'ciphertext');
    readFileSync(cipherPath);
    const { ours: cipher, theirs: cipherTheirs } = await bracketed(cipherPath, dir);
    console.log(
      `encrypted: ${rate(packets, cipher.cpuSecs)} packets/s CPU (${cipher.cpuSecs.toFixed(2)} s CPU), ${(cipherTheirs.cpuSecs / cipher.cpuSecs).toFixed(2)}× softflowd's on the same file; warm ${rate(packets, cipher.warmCpuSecs)} packets/s, ${(cipherTheirs.cpuSecs / cipher.warmCpuSecs).toFixed(2)}×`,
    );
    console.log(
      `           (the same replay, each payload pseudo-random and captured to ${CIPHERTEXT_SNAPLEN} bytes: TLS as a live capture sees it; ${(statSync(cipherPath).size / 2 ** 20).toFixed(0)} MiB, softflowd ${cipherTheirs.cpuSecs.toFixed(2)} s CPU, the mean of its runs before and after the meter)`,
    );

    const collector = await meterInChild(path, true);
    console.log(
      `collector: ${rate(packets, collector.cpuSecs)} packets/s, ${rate(collector.records, collector.cpuSecs)} flows/s CPU (${collector.cpuSecs.toFixed(2)} s CPU, ${collector.warmCpuSecs.toFixed(2)} s warm: the meter writing its flows as Native rows, as the collector sends them, not gzipped)`,
    );

    const exported = await softflowdExport(path, '10');
    const decoded = decodeExports(exported.datagrams, exported.port);
    console.log(
      `exports:   ${rate(decoded.records, decoded.cpuSecs)} records/s CPU decoding softflowd's IPFIX of the same capture (${decoded.records} records in ${exported.datagrams.length} datagrams; goal ≥ 200,000)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function refuse(message: string): never {
  console.error(`bench:meter: ${message}`);
  process.exit(1);
}

interface BenchOptions {
  packets: number;
  rounds: number;
  instructions: boolean;
  /** --instructions counts the ciphertext replay rather than the main one. */
  encrypted: boolean;
}

/** PACKETS, --rounds, --instructions and --encrypted from the command line; a bad value ends the run with a message. */
function benchOptions(): BenchOptions {
  let parsed;
  try {
    parsed = parseArgs({
      options: { rounds: { type: 'string', default: '1' }, instructions: { type: 'boolean', default: false }, encrypted: { type: 'boolean', default: false } },
      allowPositionals: true,
    });
  } catch (error) {
    return refuse((error as Error).message);
  }
  const [packetsText = '1000000'] = parsed.positionals;
  const packets = Number(packetsText);
  const rounds = Number(parsed.values.rounds);
  if (!Number.isInteger(packets) || packets < 1) refuse(`PACKETS must be a positive whole number, not ${packetsText}`);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS) refuse(`--rounds must be 1 to ${MAX_ROUNDS}, not ${parsed.values.rounds}`);
  const instructions = parsed.values.instructions;
  if (instructions && rounds > 1) refuse('--instructions counts one run of each; it does not take --rounds');
  const encrypted = parsed.values.encrypted;
  if (encrypted && !instructions) refuse('--encrypted chooses the replay --instructions counts; without it the bench times both replays');
  if (instructions && !hasValgrind()) refuse('--instructions needs valgrind (Debian: apt-get install valgrind)');
  return { packets, rounds, instructions, encrypted };
}

function hasValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (process.argv[2] === METER_FILE) await meterFile(process.argv[3], process.argv.includes(NATIVE), process.argv.includes(FIRST_ONLY));
else {
  await compare(benchOptions());
}
