import { describe, expect, it } from 'vitest';
import { inspectPayload } from './app/index.js';
import { MeterCore } from './meter-core.js';
import type { InspectedPacket, PayloadSelection } from './packet.js';
import { asciiPrefix, MAX_PREFIX_LENGTH, MAX_PREFIXES, PayloadRules, selectionOf, writeSelection } from './payload-selection.js';

const coreWith = (selection?: PayloadSelection) =>
  new MeterCore({ frameBytes: 4096, maxFlows: 1, idleMicros: 0, activeMicros: 0, lingerMicros: 0, inspectPerDirection: 1, selection });

/** The WebAssembly's reading of its rules for a payload placed in its frames. */
function coreSelects(core: MeterCore, p: Omit<InspectedPacket, 'data' | 'payloadStart' | 'payloadEnd'>, payload: Uint8Array, fromInitiator: boolean): boolean {
  core.frames.set(payload, 100);
  const start = core.frames.byteOffset + 100;
  return core.wasm.selects(p.protocol, p.hasPorts, p.srcPort, p.dstPort, start, start + payload.length, fromInitiator) === 1;
}

/** xorshift32: the same payloads on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
}

describe('payload selection', () => {
  const custom: PayloadSelection = {
    ports: [7, 53, 65535],
    prefixes: [asciiPrefix('GET ', true), { bytes: [0x16, 3], minLength: 6, initiatorOnly: false }, { bytes: [], minLength: 40, initiatorOnly: true }],
  };

  it.each([
    ['the app inspectors', inspectPayload.reads!],
    ['ports, prefixes, a least length and an empty prefix', custom],
  ])('reads the same payloads in WebAssembly as in JavaScript: %s', (_name, selection) => {
    const core = coreWith(selection);
    const rules = new PayloadRules(selection);
    const next = random(0x5e1ec7);
    const starts = [
      [],
      [...Buffer.from('GET /')],
      [...Buffer.from('SSH-2.0-x')],
      [...Buffer.from('SSH-1.99-x')],
      [0x16, 3, 1],
      [0x16, 3, 4],
      [0x16, 3, 5],
      [0x16, 3],
    ];
    let selected = 0;
    for (let i = 0; i < 20_000; i++) {
      const start = starts[next() % starts.length];
      const payload = Uint8Array.from([...start, ...Array.from({ length: next() % 48 }, () => next() & 0xff)]).subarray(0, next() % 60);
      const packet = {
        protocol: [6, 17, 1, 58][next() % 4],
        hasPorts: next() % 8 !== 0,
        srcPort: next() % 4 === 0 ? [7, 53, 443, 65535][next() % 4] : next() & 0xffff,
        dstPort: next() % 4 === 0 ? [7, 53, 443, 65535][next() % 4] : next() & 0xffff,
      };
      const fromInitiator = next() % 2 === 0;
      const js = rules.reads({ ...packet, data: payload, payloadStart: 0, payloadEnd: payload.length }, fromInitiator);
      expect(coreSelects(core, packet, payload, fromInitiator), JSON.stringify({ packet, payload: [...payload], fromInitiator })).toBe(js);
      if (js) selected++;
    }
    // Both answers occur often enough for the comparison to say something.
    expect(selected).toBeGreaterThan(2_000);
    expect(selected).toBeLessThan(18_000);
  });

  it('shows every payload when an inspector does not say what it reads', () => {
    expect(selectionOf([inspectPayload, () => undefined])).toBeUndefined();
    expect(selectionOf([inspectPayload])).toEqual(inspectPayload.reads);
    const core = coreWith(undefined);
    expect(coreSelects(core, { protocol: 47, hasPorts: false, srcPort: 0, dstPort: 0 }, Uint8Array.of(1), false)).toBe(true);
  });

  it('refuses rules the WebAssembly has no room for', () => {
    const memory = new Uint8Array(64 * 1024);
    const prefix = asciiPrefix('x');
    expect(() => writeSelection(memory, 0, { ports: [], prefixes: Array(MAX_PREFIXES + 1).fill(prefix) })).toThrow(RangeError);
    expect(() => writeSelection(memory, 0, { ports: [], prefixes: [asciiPrefix('x'.repeat(MAX_PREFIX_LENGTH + 1))] })).toThrow(RangeError);
    expect(() => writeSelection(memory, 0, { ports: [65536], prefixes: [] })).toThrow(RangeError);
    expect(() => coreWith({ ports: [], prefixes: Array(MAX_PREFIXES).fill(prefix) })).not.toThrow();
  });
});
