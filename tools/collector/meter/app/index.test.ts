import { describe, expect, it } from 'vitest';
import type { DropCounts } from '../packet.js';
import { countingInspector, inspect, inspectPayload } from './index.js';
import { packetWith } from './testing/loopback.js';

/** xorshift32: the same hostile bytes on every run, so a failure can be replayed. */
function randomBytes(seed: number) {
  let state = seed;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  return (length: number) => Uint8Array.from({ length }, () => next() & 0xff);
}

const PREFIXES: Array<[string, number[]]> = [
  ['none', []],
  ['TLS handshake', [0x16, 0x03, 0x03]],
  ['TLS ClientHello', [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]],
  ['HTTP', [...Buffer.from('GET /')]],
  ['SSH', [...Buffer.from('SSH-2.0-')]],
  ['DNS question', [0x12, 0x34, 0x81, 0x80, 0x00, 0x01, 0xff, 0xff]],
];

describe('inspectPayload on hostile bytes', () => {
  it('never throws, whatever the bytes, ports or direction', () => {
    const random = randomBytes(0x2026);
    let hinted = 0;
    for (const [, prefix] of PREFIXES) {
      for (let i = 0; i < 3000; i++) {
        const payload = Uint8Array.from([...prefix, ...random(i % 700)]);
        for (const [protocol, port] of [
          [6, 443],
          [6, 53],
          [17, 53],
          [6, 8080],
          [17, 4000],
        ] as const) {
          const hints = inspectPayload(packetWith(payload, { protocol, srcPort: 40000, dstPort: port }), i % 2 === 0);
          if (hints !== undefined) hinted++;
        }
      }
    }
    expect(hinted).toBeGreaterThan(0); // the signatures were reached, not all skipped
  });

  it("reads only the payload's range of the frame's bytes, as the meter's headers give it", () => {
    const random = randomBytes(0x5eed);
    let hinted = 0;
    for (const [, prefix] of PREFIXES) {
      for (let i = 0; i < 1500; i++) {
        const payload = Uint8Array.from([...prefix, ...random(i % 300)]);
        for (const [protocol, port] of [
          [6, 443],
          [6, 53],
          [17, 53],
          [6, 8080],
          [17, 4000],
        ] as const) {
          const packet = packetWith(payload, { protocol, srcPort: 40000, dstPort: port });
          // The meter's headers point into the frame: the payload sits between other bytes.
          const headers = packetWith(payload, { protocol, srcPort: 40000, dstPort: port });
          headers.data = Uint8Array.from([...random(7), ...payload, ...random(5)]);
          headers.payloadStart = 7;
          headers.payloadEnd = 7 + payload.length;
          for (const fromInitiator of [true, false]) {
            const alone = inspect(packet, fromInitiator);
            expect(inspect(headers, fromInitiator)).toEqual(alone);
            if (alone.hints !== undefined) hinted++;
          }
        }
      }
    }
    expect(hinted).toBeGreaterThan(1000);
  });

  it('counts why it stopped', () => {
    const drops: DropCounts = {};
    const inspector = countingInspector(drops);
    const cutHello = Uint8Array.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]);
    expect(inspector(packetWith(cutHello, { protocol: 6, srcPort: 40000, dstPort: 443 }), true)).toBeUndefined();
    expect(inspector(packetWith(Uint8Array.from([1, 2, 3]), { protocol: 17, srcPort: 40000, dstPort: 53 }), true)).toBeUndefined();
    expect(drops).toEqual({ 'tls.truncated': 1, 'dns.truncated': 1 });
  });

  it('leaves payloads it does not recognise alone', () => {
    const packet = packetWith(Buffer.from('hello world'), { protocol: 6, srcPort: 40000, dstPort: 7000 });
    expect(inspect(packet, true)).toEqual({});
    expect(inspect(packetWith(new Uint8Array(0), { protocol: 6, srcPort: 40000, dstPort: 7000 }), true)).toEqual({});
  });
});
