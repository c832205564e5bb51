// Throughput of the flow table alone: `npx tsx tools/collector/meter/flow-table-bench.ts [packets] [flows]`.
// TCP conversations (handshake, data both ways, FIN close) interleaved packet by packet, built
// in batches outside the timed part (as Ethernet frames, so that making the hand-made packets is
// not timed); reports packets/s and records/s of CPU time, decoding included.

import { FlowTable } from './flow-table.js';
import { TcpConversation } from './hand-packets.js';
import { TcpFlag, type DecodedPacket, type FrameSpan } from './packet.js';
import { encodeFrame } from './testing/encode-frame.js';

const total = Number(process.argv[2] ?? 1_000_000);
const flowCount = Number(process.argv[3] ?? 10_000);
const perFlow = Math.max(8, Math.floor(total / flowCount));
const BATCH = 100_000;
const STEP_MICROS = 10;

let x = 0x9e3779b9;
const ciphertext = Uint8Array.from({ length: 1200 }, () => ((x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) >>> 0), x & 255));
const conversations = Array.from(
  { length: flowCount },
  (_, i) => new TcpConversation({ src: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, dst: '203.0.113.10', srcPort: 20000 + (i % 40000), dstPort: 443 }),
);

/** The n-th packet overall: packet n / flowCount of conversation n % flowCount. */
function packetAt(n: number, ts: number): DecodedPacket {
  const c = conversations[n % flowCount];
  const k = Math.floor(n / flowCount);
  const { SYN, ACK, PSH, FIN } = TcpFlag;
  if (k === 0) return c.segment(ts, true, SYN);
  if (k === 1) return c.segment(ts, false, SYN | ACK);
  if (k === 2) return c.segment(ts, true, ACK);
  if (k === perFlow - 3) return c.segment(ts, true, FIN | ACK);
  if (k === perFlow - 2) return c.segment(ts, false, FIN | ACK);
  if (k === perFlow - 1) return c.segment(ts, true, ACK);
  return k % 3 === 0 ? c.segment(ts, true, ACK) : c.segment(ts, false, PSH | ACK, ciphertext);
}

const table = new FlowTable({
  customerId: 'bench',
  sensor: { id: 'bench', type: 'packet', name: 'bench', hostname: 'bench', interface: 'bench0' },
  tags: [],
});
const start = Date.UTC(2026, 0, 15, 12) * 1000;
const packets = perFlow * flowCount;
let records = 0;
let cpuMicros = 0;
for (let n = 0; n < packets; n += BATCH) {
  const batch: FrameSpan[] = [];
  for (let i = n; i < Math.min(packets, n + BATCH); i++) {
    const frame = encodeFrame(packetAt(i, start + i * STEP_MICROS));
    batch.push({ tsMicros: frame.tsMicros, linkType: frame.linkType, wireLength: frame.wireLength, bytes: frame.data, start: 0, end: frame.data.length });
  }
  const drops = {};
  const cpu = process.cpuUsage();
  for (const frame of batch) {
    table.meterFrame(frame, drops);
    for (const flow of table.takeEnded()) records += table.recordOf(flow) === undefined ? 0 : 1;
  }
  const used = process.cpuUsage(cpu);
  cpuMicros += used.user + used.system;
}
const cpu = process.cpuUsage();
records += table.flush().length;
const used = process.cpuUsage(cpu);
cpuMicros += used.user + used.system;
const secs = cpuMicros / 1e6;
console.log(
  `${packets} packets, ${records} records (${flowCount} flows): ${Math.round(packets / secs)} packets/s, ${Math.round(records / secs)} records/s CPU`,
);
