// Data exfiltration: one internal host pushes a large archive to a hosting
// provider nobody else at the site talks to, in a burst of parallel uploads
// (rclone-style, four lanes). Payloads are compressed and encrypted, so
// full-sized packets read ~7.87 bits/byte; upload dwarfs download.

import { RARE_ORGS } from '../catalog/orgs.js';
import { namedProcess } from '../conversation.js';
import { endpointInOrg } from '../endpoints.js';
import type { ExfilScenario } from '../options.js';
import type { FlowSpec } from '../record.js';
import { chooseSourceHost, placeWindow, secs, toolProcess, type PlannedIncident, type ScenarioContext } from './plan.js';

const MB = 1024 * 1024;
const GB = 1024 * MB;

export const EXFIL_DEFAULTS = {
  totalBytes: [0.8 * GB, 2.5 * GB] as [number, number],
  durationMs: 20 * 60_000,
  lanes: 4,
  chunkMedianBytes: 64 * MB,
};

const DROP_NAMES = ['storage.sync-vault.net', 'webdav.filedrop-archive.com', 'upload.securebackup-cloud.org'];

export function planExfil(spec: ExfilScenario, ctx: ScenarioContext): PlannedIncident {
  const { rng, world } = ctx;
  const host = chooseSourceHost(ctx, spec.sourceIp);
  const rare = RARE_ORGS.exfil[ctx.ordinal % RARE_ORGS.exfil.length];
  const site = world.options.network.site;
  const dst = endpointInOrg(rare, 200 + ctx.ordinal, site);
  const fqdn = DROP_NAMES[(ctx.ordinal + rng.int(DROP_NAMES.length)) % DROP_NAMES.length];
  const totalBytes = Math.round(spec.totalBytes ?? rng.between(...EXFIL_DEFAULTS.totalBytes));
  const window = placeWindow(ctx, spec, EXFIL_DEFAULTS.durationMs, [0.4, 0.6]);
  const windowSecs = Math.max(1, (window.endMs - window.startMs) / 1000);
  const processName = toolProcess(host, { windows: 'rclone.exe', macos: 'rclone', linux: 'rclone' });
  const process = namedProcess(host, processName);

  // Each lane uploads chunks back to back at a rate that spreads the total over the window.
  const lanes = EXFIL_DEFAULTS.lanes;
  const laneRate = totalBytes / (lanes * windowSecs * 0.9);
  const laneClock = Array.from({ length: lanes }, (_, i) => window.startMs + i * rng.between(50, 400));
  const flows: FlowSpec[] = [];
  let left = totalBytes;
  let lane = 0;
  while (left > 0) {
    // Chunks stay under the sensor's 300 s active timeout, so each one is exactly one flow record.
    const drawn = Math.max(MB, Math.round(rng.logNormal(EXFIL_DEFAULTS.chunkMedianBytes, 0.35)));
    const chunk = Math.min(left, drawn, Math.max(MB, Math.floor(laneRate * 250)));
    left -= chunk;
    const duration = chunk / (laneRate * rng.between(0.85, 1.15));
    flows.push({
      ts: Math.floor(laneClock[lane]),
      src: host,
      srcPort: rng.intBetween(host.ephemeralLo, host.ephemeralHi),
      dst,
      dstPort: 443,
      proto: 'TCP',
      app: 'HTTPS',
      up: chunk,
      down: Math.round(rng.logNormal(4096, 0.5)),
      durationSecs: secs(duration),
      outcome: 'ok',
      contentUp: 'encrypted',
      contentDown: 'encrypted',
      gapCv: 0.3,
      direction: 'egress',
      dstFqdn: fqdn,
      srcProcess: process,
      tlsVersion: 'TLS 1.3',
    });
    laneClock[lane] += duration * 1000 + rng.between(100, 900);
    lane = (lane + 1) % lanes;
  }
  flows.sort((a, b) => a.ts - b.ts);

  return {
    header: {
      id: '',
      kind: 'exfil',
      source: { ip: host.ip, external: false, hostname: host.hostname, process: processName },
      destination: { ip: dst.ip, org: rare.name, port: 443, fqdn },
      params: { total_bytes: totalBytes, lanes, tls_version: 'TLS 1.3' },
    },
    flows,
  };
}
