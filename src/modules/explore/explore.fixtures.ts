/** Crafted egress flows with known numbers for the explore tests (explore.test.ts). */

const HOUR = 3_600_000;

/** The start of the UTC hour 26 hours ago: inside the default window and the retention. */
export const BASE = Math.floor(Date.now() / HOUR) * HOUR - 26 * HOUR;
export const WINDOW = {
  start: { absolute: { date: new Date(BASE - HOUR).toISOString() } },
  end: { absolute: { date: new Date(BASE + 2 * HOUR).toISOString() } },
};

interface FlowSpec {
  at: number;
  src: string;
  dst: string;
  up: number;
  down: number;
  org?: string;
  geoOrg?: string;
  port?: number;
  proto?: string;
  app?: string;
  tls?: string;
  process?: string;
  types?: boolean;
  extra?: Record<string, unknown>;
}

export function flow(s: FlowSpec): Record<string, unknown> {
  const types = s.types ?? true;
  const dstCtx = s.org ? { organization: s.org, industry: 'Cloud' } : undefined;
  return {
    '@timestamp': s.at,
    src: { ip: s.src, port: 50_000, ...(types ? { address_type: 'private' } : {}), ...(s.process ? { process: { name: s.process, pid: 7 } } : {}) },
    dst: {
      ip: s.dst,
      port: s.port ?? 443,
      ...(types ? { address_type: 'public' } : {}),
      ...(s.geoOrg || s.org ? { geo: { ...(s.geoOrg ? { org: s.geoOrg } : {}), country_name: 'United States' } } : {}),
      ...(dstCtx ? { ctx: dstCtx } : {}),
    },
    transport: { proto: s.proto ?? 'TCP' },
    app_name: s.app ?? 'HTTPS',
    stats: { volume: { bytes: { src: { count: 1, sum: s.up }, dst: { count: 1, sum: s.down }, total: s.up + s.down } } },
    ...(s.tls ? { tls: { version: s.tls, sni: 'x.example' } } : {}),
    ...s.extra,
  };
}

const moments = (count: number, sum: number) => ({ count, sum, sum_squares: 0, sum_cubes: 0 });
const acmeStats = (entropyCount: number, entropySum: number, duration: number) => ({
  stats: {
    volume: {},
    size: { payload_entropy: moments(entropyCount, entropySum) },
    timing: { duration_secs: moments(1, duration) },
  },
});

/** Merges the stats blocks of `flow()` and `acmeStats()`. */
function withStats(f: Record<string, unknown>, extra: ReturnType<typeof acmeStats>) {
  const stats = f.stats as Record<string, unknown>;
  return { ...f, stats: { ...stats, ...extra.stats, volume: stats.volume } };
}

export const ACME = 'Acme Cloud/EU';
export const BEAT = 'Beat Co';

/**
 * Instance A: Acme (collector ctx.organization, 3 flows, 2 sources), Geo Only Inc (geo.org only),
 * Google LLC and Quad9 (no org: the dataset names them by address, Quad9 without address types),
 * 1.1.1.1 named "My DNS" by the collector (it wins over the dataset's Cloudflare), an unattributed
 * egress flow, a regular 30 s beat to Beat Co, and traffic that is not egress.
 */
export function instanceAFlows(): Record<string, unknown>[] {
  const acme = [
    withStats(
      flow({ at: BASE, src: '10.0.0.1', dst: '203.0.113.10', up: 100, down: 1000, org: ACME, tls: 'TLS 1.3', process: 'chrome.exe' }),
      acmeStats(10, 70, 2),
    ),
    withStats(
      flow({ at: BASE + 60_000, src: '10.0.0.1', dst: '203.0.113.10', up: 200, down: 2000, org: ACME, tls: 'TLS 1.3', process: 'chrome.exe' }),
      acmeStats(10, 80, 4),
    ),
    withStats(
      flow({
        at: BASE + 120_000,
        src: '10.0.0.2',
        dst: '203.0.113.11',
        up: 300,
        down: 3000,
        org: ACME,
        port: 8443,
        proto: 'UDP',
        app: 'QUIC',
        process: 'Slack',
      }),
      acmeStats(20, 120, 6),
    ),
  ];
  const beat = Array.from({ length: 21 }, (_, i) =>
    flow({
      at: BASE + i * 30_000,
      src: '10.0.0.50',
      dst: '198.51.100.77',
      up: 100,
      down: 100,
      org: BEAT,
      tls: 'TLS 1.2',
      process: 'rundll32.exe',
      extra: {
        stats: { volume: { bytes: { src: { count: 1, sum: 100 }, dst: { count: 1, sum: 100 } } }, timing: { inter_arrival_secs: { regularity: 0.9 } } },
        ...(i >= 11 ? { beacon: { session_level: { is_beacon: true }, interval: { value_ms: 30_000 } } } : {}),
      },
    }),
  );
  // A second connection 200 ms after the 2nd check-in: the same session, not a new gap.
  beat.push(flow({ at: BASE + 30_200, src: '10.0.0.50', dst: '198.51.100.77', up: 100, down: 100, org: BEAT, process: 'rundll32.exe' }));
  return [
    ...acme,
    ...beat,
    flow({ at: BASE + 1_000, src: '10.0.0.3', dst: '198.51.100.5', up: 50, down: 50, geoOrg: 'Geo Only Inc' }),
    flow({ at: BASE + 2_000, src: '10.0.0.1', dst: '8.8.8.8', up: 10, down: 20 }),
    flow({ at: BASE + 3_000, src: '10.0.0.4', dst: '8.8.8.8', up: 10, down: 20 }),
    flow({ at: BASE + 4_000, src: '10.0.0.1', dst: '1.1.1.1', up: 5, down: 5, org: 'My DNS' }),
    flow({ at: BASE + 5_000, src: '192.168.1.5', dst: '9.9.9.9', up: 20, down: 20, types: false }),
    flow({ at: BASE + 6_000, src: '10.0.0.1', dst: '192.0.2.1', up: 1, down: 1 }),
    // Not egress: east-west, inbound, and to a multicast group.
    flow({ at: BASE + 7_000, src: '10.0.0.1', dst: '10.0.0.9', up: 9_999, down: 9_999, types: false }),
    flow({ at: BASE + 8_000, src: '8.8.4.4', dst: '10.0.0.1', up: 9_999, down: 9_999, types: false }),
    flow({ at: BASE + 9_000, src: '10.0.0.1', dst: '239.255.255.250', up: 9_999, down: 9_999, types: false }),
  ];
}

/** Instance B (a sibling) and another tree: Acme traffic that A's caller must never see. */
export function otherAcmeFlows(src: string): Record<string, unknown>[] {
  return [flow({ at: BASE + 10_000, src, dst: '203.0.113.10', up: 1_000_000, down: 1_000_000, org: ACME, tls: 'TLS 1.2', process: 'curl' })];
}
