// Record fields that every builder of wire flow records (flowgen's record.ts, the packet meter's
// flow-record.ts, the flow-export decoder's record.ts) derives the same way from the same numbers,
// and the text hash the meter and the export decoder key records with.

import { round3 } from './packets.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** meta.time_of_day of a record starting at `ts` (epoch ms): the UTC hour. */
export function timeOfDay(ts: number): number {
  return Math.floor(ts / HOUR_MS) % 24;
}

/** meta.day_of_week of a record starting at `ts` (epoch ms): ISO, 1 = Monday, in UTC. */
export function dayOfWeek(ts: number): number {
  return ((Math.floor(ts / DAY_MS) + 3) % 7) + 1; // 1970-01-01 was a Thursday (ISO 4)
}

/** stats.volume.packets. */
export function packetCounts(src: number, dst: number): { src: number; dst: number; total: number } {
  return { src, dst, total: src + dst };
}

/** stats.rate: bits and packets per second over the flow's duration (at least 1 ms), to 3 decimals. */
export function flowRates(srcBytes: number, dstBytes: number, srcPackets: number, dstPackets: number, durationSecs: number) {
  const window = Math.max(durationSecs, 0.001);
  return {
    bps: { src: round3((srcBytes * 8) / window), dst: round3((dstBytes * 8) / window), total: round3(((srcBytes + dstBytes) * 8) / window) },
    pps: { src: round3(srcPackets / window), dst: round3(dstPackets / window), total: round3((srcPackets + dstPackets) / window) },
  };
}

const FNV_PRIME = 0x01000193;

/** FNV-1a hash `h` continued over the text's UTF-16 code units (finish it with mix32: FNV spreads poorly). */
export function fnvText(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h;
}
