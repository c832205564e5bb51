// The payloads inspectors read, as rules (PayloadSelection in packet.ts) that both sides apply:
// JavaScript to pick the inspector for a payload (app/index.ts), the WebAssembly core
// (wasm/payload-selection.ts, written from here) to show JavaScript only payloads some inspector
// reads. A test holds the two readings of the rules equal.

import type { InspectedPacket, PayloadInspector, PayloadPrefix, PayloadSelection } from './packet.js';
import { PROTO_TCP, PROTO_UDP } from './well-known.js';

/** What the core's memory holds room for, and where (wasm/payload-selection.ts; meter-core.ts checks them). */
export const SELECTION_LAYOUT = { MAX_PREFIXES: 32, MAX_PREFIX_LENGTH: 16, PREFIX_BYTES: 20, FIRST_BYTES: 8, PORT_MAP: 40, PREFIXES: 40 + 65536 / 8 } as const;
export const { MAX_PREFIXES, MAX_PREFIX_LENGTH } = SELECTION_LAYOUT;

/** A prefix of ASCII text (a method, a banner), of any payload at least as long. */
export function asciiPrefix(text: string, initiatorOnly = false): PayloadPrefix {
  return { bytes: Array.from(text, (c) => c.charCodeAt(0)), minLength: text.length, initiatorOnly };
}

/** A selection as JavaScript reads it, with the bytes that start a prefix at hand (most payloads start with none). */
export class PayloadRules {
  private readonly ports: readonly number[];
  private readonly prefixes: readonly PayloadPrefix[];
  private readonly firstBytes = new Uint8Array(32);

  constructor(selection: PayloadSelection) {
    this.ports = selection.ports;
    this.prefixes = selection.prefixes;
    markFirstBytes(this.firstBytes, 0, selection.prefixes);
  }

  /** Whether the selection reads the packet's payload. */
  reads(p: InspectedPacket, fromInitiator: boolean): boolean {
    const { data, payloadStart: start, payloadEnd: end } = p;
    if (end <= start) return false;
    if ((p.protocol === PROTO_TCP || p.protocol === PROTO_UDP) && p.hasPorts && (this.ports.includes(p.srcPort) || this.ports.includes(p.dstPort))) return true;
    if (p.protocol !== PROTO_TCP) return false;
    const first = data[start];
    if ((this.firstBytes[first >>> 3] & (1 << (first & 7))) === 0) return false;
    // Loops rather than some(): this runs for every payload shown.
    const prefixes = this.prefixes;
    for (let i = 0; i < prefixes.length; i++) {
      const prefix = prefixes[i];
      const bytes = prefix.bytes;
      if (end - start < bytes.length || end - start < prefix.minLength || (prefix.initiatorOnly && !fromInitiator)) continue;
      let k = 0;
      while (k < bytes.length && data[start + k] === bytes[k]) k++;
      if (k === bytes.length) return true;
    }
    return false;
  }
}

/** A bit per byte value that starts one of the prefixes, in the 32 bytes at `at`; an empty prefix is any byte's. */
function markFirstBytes(memory: Uint8Array, at: number, prefixes: readonly PayloadPrefix[]): void {
  memory.fill(0, at, at + 32);
  for (const { bytes } of prefixes) {
    if (bytes.length === 0) memory.fill(0xff, at, at + 32);
    else memory[at + (bytes[0] >>> 3)] |= 1 << (bytes[0] & 7);
  }
}

/** What the inspectors read together; undefined when one of them does not say (it is shown everything). */
export function selectionOf(inspectors: readonly PayloadInspector[]): PayloadSelection | undefined {
  if (inspectors.some((inspector) => inspector.reads === undefined)) return undefined;
  return unionOf(inspectors.map((inspector) => inspector.reads!));
}

/** The payloads any of the selections reads. */
export function unionOf(selections: readonly PayloadSelection[]): PayloadSelection {
  return { ports: [...new Set(selections.flatMap((s) => s.ports))], prefixes: selections.flatMap((s) => s.prefixes) };
}

/**
 * The selection's bytes as wasm/payload-selection.ts lays them out at `at` in `memory`; throws
 * when it does not fit (more prefixes, or longer ones, than the core holds).
 */
export function writeSelection(memory: Uint8Array, at: number, selection: PayloadSelection): void {
  const { ports, prefixes } = selection;
  if (prefixes.length > MAX_PREFIXES) throw new RangeError(`a payload selection holds ${MAX_PREFIXES} prefixes, not ${prefixes.length}`);
  const words = new DataView(memory.buffer, memory.byteOffset + at, 8);
  words.setUint32(0, 0, true); // rules, not "show every payload"
  words.setUint32(4, prefixes.length, true);
  markFirstBytes(memory, at + SELECTION_LAYOUT.FIRST_BYTES, prefixes);
  const portMap = at + SELECTION_LAYOUT.PORT_MAP;
  memory.fill(0, portMap, portMap + 65536 / 8);
  for (const port of ports) {
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`a payload selection's port is 0 to 65535, not ${port}`);
    memory[portMap + (port >>> 3)] |= 1 << (port & 7);
  }
  prefixes.forEach((prefix, i) => {
    const { bytes, minLength } = prefix;
    if (bytes.length > MAX_PREFIX_LENGTH || minLength > 255)
      throw new RangeError(`a payload prefix is at most ${MAX_PREFIX_LENGTH} bytes and asks at most 255`);
    const entry = at + SELECTION_LAYOUT.PREFIXES + i * SELECTION_LAYOUT.PREFIX_BYTES;
    memory[entry] = bytes.length;
    memory[entry + 1] = minLength;
    memory[entry + 2] = prefix.initiatorOnly ? 1 : 0;
    memory.set(bytes, entry + 4);
  });
}
