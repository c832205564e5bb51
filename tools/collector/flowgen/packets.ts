// Packet accounting: turns application bytes into the packets a sensor would
// count, so bytes, packets, packet-size moments and entropy moments in one
// record always agree with each other.

import type { ContentClass } from './catalog/traffic.js';
import type { Moments } from './types.js';

export const TCP_MSS = 1448; // 1500 MTU − 20 IP − 32 TCP with timestamps
export const TCP_HEADER = 52;
export const UDP_MAX_PAYLOAD = 1252; // QUIC and media keep datagrams under ~1280 bytes
export const UDP_HEADER = 28;
const SYN_SIZE = 60;
const RST_SIZE = 40;
export const ETHERNET_HEADER = 14;

/** Running power sums of a multiset of values: what a Moments object holds. */
export class Tally {
  count = 0;
  s1 = 0;
  s2 = 0;
  s3 = 0;

  reset(): this {
    this.count = 0;
    this.s1 = 0;
    this.s2 = 0;
    this.s3 = 0;
    return this;
  }

  add(n: number, value: number): void {
    if (n <= 0) return;
    this.count += n;
    this.s1 += n * value;
    const sq = value * value;
    this.s2 += n * sq;
    this.s3 += n * sq * value;
  }

  addTally(other: Tally): void {
    this.count += other.count;
    this.s1 += other.s1;
    this.s2 += other.s2;
    this.s3 += other.s3;
  }

  moments(): Moments {
    return momentsOfSums(this.count, this.s1, this.s2, this.s3);
  }

  /** Moments of every value shifted by c (a packet tally becomes a frame tally). */
  shiftedMoments(c: number): Moments {
    const n = this.count;
    return {
      count: n,
      sum: tidy(this.s1 + n * c),
      sum_squares: tidy(this.s2 + 2 * c * this.s1 + n * c * c),
      sum_cubes: tidy(this.s3 + 3 * c * this.s2 + 3 * c * c * this.s1 + n * c * c * c),
    };
  }
}

/** The Moments of a tally's power sums (as Tally.moments gives them, for sums kept elsewhere). */
export function momentsOfSums(count: number, s1: number, s2: number, s3: number): Moments {
  return { count, sum: tidy(s1), sum_squares: tidy(s2), sum_cubes: tidy(s3) };
}

/** Moments of `count` samples with the given mean and standard deviation (no skew). */
export function momentsOf(count: number, mean: number, sd: number): Moments {
  const m2 = mean * mean + sd * sd;
  return {
    count,
    sum: tidy(count * mean),
    sum_squares: tidy(count * m2),
    sum_cubes: tidy(count * (mean * mean * mean + 3 * mean * sd * sd)),
  };
}

const LN2 = Math.LN2;
const ENTROPY_CAP: Record<ContentClass, number> = { encrypted: 8, binary: 6.1, encoded: 5.3, text: 4.9, dns: 4.1, ntp: 3.2 };

/**
 * Expected byte entropy (bits/byte) measured on one packet of `len` payload
 * bytes. Even random bytes score below 8 on a short packet, because the
 * empirical distribution of n draws is lumpy: ≈ log2 n − (n−1)/(512 ln2) for
 * n < 256 and 8 − 255/(2n ln2) above (the two meet at n = 256). Structured
 * content is capped lower. This is why a full-sized encrypted upload reads
 * ~7.87 and a DNS query ~4.
 */
export function packetEntropy(len: number, content: ContentClass): number {
  if (len <= 1) return 0;
  const random = len < 256 ? Math.log2(len) - (len - 1) / (512 * LN2) : 8 - 255 / (2 * len * LN2);
  return Math.min(random, ENTROPY_CAP[content]);
}

export type TcpOutcome = 'ok' | 'refused' | 'unanswered' | 'probed-open';

export interface PacketCounts {
  src: Tally;
  dst: Tally;
  entropy: Tally;
  dataPackets: number;
}

/**
 * Reused for every flow: the record builder reads the counts immediately, and
 * not allocating four tallies per flow is a measurable share of throughput.
 * Valid only until the next tcpPackets/udpPackets call.
 */
const scratch: PacketCounts = { src: new Tally(), dst: new Tally(), entropy: new Tally(), dataPackets: 0 };

function resetScratch(): PacketCounts {
  scratch.src.reset();
  scratch.dst.reset();
  scratch.entropy.reset();
  scratch.dataPackets = 0;
  return scratch;
}

/** One direction's data: full segments plus one partial, plus their entropy. */
function addData(direction: Tally, entropy: Tally, bytes: number, mss: number, header: number, content: ContentClass, entropyNoise: number): number {
  if (bytes <= 0) return 0;
  const full = Math.floor(bytes / mss);
  const rest = bytes - full * mss;
  direction.add(full, mss + header);
  entropy.add(full, round4(packetEntropy(mss, content) + entropyNoise));
  if (rest > 0) {
    direction.add(1, rest + header);
    entropy.add(1, round4(Math.max(0, packetEntropy(rest, content) + entropyNoise)));
  }
  return full + (rest > 0 ? 1 : 0);
}

export function tcpPackets(
  up: number,
  down: number,
  outcome: TcpOutcome,
  contentUp: ContentClass,
  contentDown: ContentClass,
  entropyNoise: number,
): PacketCounts {
  const counts = resetScratch();
  const { src, dst, entropy } = counts;
  if (outcome === 'unanswered') {
    src.add(up > 0 ? 2 : 1, SYN_SIZE); // `up` > 0 here means the SYN was retried once
    return counts;
  }
  if (outcome === 'refused') {
    src.add(1, SYN_SIZE);
    dst.add(1, RST_SIZE);
    return counts;
  }
  if (outcome === 'probed-open') {
    src.add(1, SYN_SIZE);
    src.add(1, RST_SIZE);
    dst.add(1, SYN_SIZE);
    return counts;
  }
  const dataUp = addData(src, entropy, up, TCP_MSS, TCP_HEADER, contentUp, entropyNoise);
  const dataDown = addData(dst, entropy, down, TCP_MSS, TCP_HEADER, contentDown, entropyNoise);
  // Handshake and teardown, plus delayed ACKs (one per two segments received).
  src.add(3 + Math.ceil(dataDown / 2), TCP_HEADER);
  dst.add(2 + Math.ceil(dataUp / 2), TCP_HEADER);
  counts.dataPackets = dataUp + dataDown;
  return counts;
}

export function udpPackets(up: number, down: number, contentUp: ContentClass, contentDown: ContentClass, entropyNoise: number): PacketCounts {
  const counts = resetScratch();
  const dataUp = addData(counts.src, counts.entropy, up, UDP_MAX_PAYLOAD, UDP_HEADER, contentUp, entropyNoise);
  const dataDown = addData(counts.dst, counts.entropy, down, UDP_MAX_PAYLOAD, UDP_HEADER, contentDown, entropyNoise);
  counts.dataPackets = dataUp + dataDown;
  return counts;
}

/** Drops float noise from sums of rounded values; byte sums are integers and stay exact. */
export function tidy(x: number): number {
  return Number.isInteger(x) ? x : round6(x);
}

export function round3(x: number): number {
  return Math.round(x * 1e3) / 1e3;
}

export function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

export function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
