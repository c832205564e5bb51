/**
 * Deterministic sample flow records for tests: values drawn from small pools (so filters match
 * something), every kind of field, missing leaves, awkward strings and IP spellings.
 */

/** Small seeded PRNG (mulberry32): the same seed gives the same flows on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const POOLS = {
  app: ['DNS', 'Google Drive', 'HTTPS', "it's", 'back\\slash', '50%_off', 'Ünïcode', 'a "quote"'],
  proto: ['TCP', 'UDP', 'ICMP'],
  country: ['US', 'DE', 'FR'],
  port: [0, 53, 80, 443, 8080, 65535],
  asn: [0, 13335, 15169, 4294967295],
  count: [-3, 0, 1, 7, 2 ** 40],
  bytes: [-3.25, 0, 1e-5, 0.5, 1000, 123456.75],
  confidence: [0, 0.25, 0.9999],
  ip: ['10.0.0.1', '10.1.2.3', '192.168.1.10', '2001:db8::1', '2001:DB8:0:0:0:0:0:2', '::ffff:10.0.0.7', '8.8.8.8', 'not-an-ip'],
  tags: [[], ['a'], ['a', 'b'], ['scan'], ['b', 'c d']],
  flags: [['SYN'], ['SYN', 'ACK'], []],
  host: ['web-01', 'db-01', 'srv-x'],
  bool: [true, false],
} as const;

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
/** The value, or undefined one time in five (a missing leaf). */
const maybe = <T>(r: Rand, xs: readonly T[]): T | undefined => (r() < 0.2 ? undefined : pick(r, xs));

function prune(obj: Record<string, unknown>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined) continue;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const inner = prune(v as Record<string, unknown>);
      if (inner) out[k] = inner;
    } else out[k] = v;
  }
  return Object.keys(out).length ? out : undefined;
}

/** `n` flows, newest first, one second apart, ending at `endMs`. */
export function sampleFlows(n: number, seed: number, endMs: number): Record<string, unknown>[] {
  const r = prng(seed);
  const flows: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const host = maybe(r, POOLS.host);
    const flow = {
      '@timestamp': endMs - i * 1000,
      app_name: maybe(r, POOLS.app),
      doc_type: 'flow',
      src: {
        ip: maybe(r, POOLS.ip),
        port: maybe(r, POOLS.port),
        geo: { country_iso_code: maybe(r, POOLS.country), asn: maybe(r, POOLS.asn), location: { lat: maybe(r, [48.85, -33.9]), lon: maybe(r, [2.35]) } },
      },
      dst: { ip: maybe(r, POOLS.ip), port: maybe(r, POOLS.port), address_type: maybe(r, ['private', 'public']) },
      transport: { proto: maybe(r, POOLS.proto), proto_num: maybe(r, [6, 17]) },
      threat: { ip: maybe(r, POOLS.ip), tags: maybe(r, POOLS.tags) },
      meta: { tags: maybe(r, POOLS.tags), flipped: maybe(r, POOLS.bool), time_of_day: maybe(r, [0, 13, 23]) },
      tcp: { flags: maybe(r, POOLS.flags) },
      suricata: { flow: { alerted: maybe(r, POOLS.bool) } },
      beacon: { confidence: maybe(r, POOLS.confidence) },
      stats: {
        connection_count: maybe(r, POOLS.count),
        volume: { bytes: { total: maybe(r, POOLS.bytes), src: { count: maybe(r, [3]), sum: maybe(r, [1.5]) } } },
      },
      mpls: { '1_label': maybe(r, [16, 17]) },
      path: host === undefined ? undefined : [{ sensor: { hostname: host, name: `sensor-${host}` }, src_vlan: 10 }],
    };
    flows.push(prune(flow)!);
  }
  return flows;
}
