// How fast the capture reader and decoder are on one core: captures the bench's own loopback
// traffic with tcpdump, repeats its frames into a pcap file of --packets frames (default
// 1,000,000), then times reading and decoding it from memory as the meter does (frames as spans
// of the chunk, decoded into one reused PacketHeaders). Run as root (tcpdump, loopback only):
//   npx tsx tools/collector/meter/decode-bench.ts [--packets N]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaptureReader } from './capture.js';
import { decodeHeaders } from './decode.js';
import { PacketHeaders, type CapturedFrame, type DropCounts } from './packet.js';
import { listenOnLoopback, ping, startTcpdump } from './testing/tcpdump.js';
import { writePcap } from './testing/write-capture.js';

const CHUNK_BYTES = 1 << 20;

async function captureSample(): Promise<CapturedFrame[]> {
  const [v4, v6] = [await listenOnLoopback('127.0.0.1'), await listenOnLoopback('::1')];
  const filter = [v4.tcpPort, v4.udpPort, v6.tcpPort, v6.udpPort].map((p) => `port ${p}`).join(' or ') + ' or (icmp and ip[2:2] = 92)';
  const capture = await startTcpdump({ iface: 'lo', filter });
  for (const peers of [v4, v6]) {
    await peers.exchangeTcp('GET / HTTP/1.0\r\n\r\n', 'HTTP/1.0 200 OK\r\n\r\n' + 'x'.repeat(1400));
    await peers.sendUdp([40, 120, 512]);
  }
  await ping('127.0.0.1', 64, 2);
  const { bytes } = await capture.stop();
  await Promise.all([v4.close(), v6.close()]);
  const reader = new CaptureReader();
  return reader.push(bytes);
}

/** The sample repeated, each copy a second later, to `count` frames. */
function repeat(sample: CapturedFrame[], count: number): CapturedFrame[] {
  const start = sample[0].tsMicros;
  return Array.from({ length: count }, (_, i) => {
    const frame = sample[i % sample.length];
    return { ...frame, tsMicros: frame.tsMicros + Math.floor(i / sample.length) * 1e6 - start + 1.7e15 };
  });
}

async function main(): Promise<void> {
  const packetsArg = process.argv.indexOf('--packets');
  const count = packetsArg > 0 ? Number(process.argv[packetsArg + 1]) : 1_000_000;
  const dir = mkdtempSync(join(tmpdir(), 'meter-bench-'));
  try {
    const sample = await captureSample();
    const file = join(dir, 'bench.pcap');
    writeFileSync(file, writePcap(repeat(sample, count), { linkType: sample[0].linkType }));

    const bytes = readFileSync(file);
    const drops: DropCounts = {};
    const reader = new CaptureReader(drops);
    const headers = new PacketHeaders();
    let decoded = 0;
    const started = process.hrtime.bigint();
    for (let at = 0; at < bytes.length; at += CHUNK_BYTES) {
      reader.read(bytes.subarray(at, at + CHUNK_BYTES), (frame) => void (decodeHeaders(frame, headers, drops) && decoded++));
    }
    reader.end();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.log(`meter read+decode: ${count} frames (${sample.length}-frame real sample repeated), ${decoded} decoded, drops ${JSON.stringify(drops)}`);
    console.log(`  ${seconds.toFixed(2)} s, ${Math.round(count / seconds).toLocaleString('en')} packets/s`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
