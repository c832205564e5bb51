// Internal reconnaissance: one workstation SYN-scans a server subnet on the
// usual ports, nmap-style (one fixed source port, shuffled target order,
// one retry for silence). Nearly every probe fails: no host, a closed port
// (RST) or a firewall that drops (no answer). Open ports see a SYN-ACK that
// the scanner resets.

import { namedProcess } from '../conversation.js';
import type { Endpoint, HostRole, InternalHost } from '../endpoints.js';
import { internalHost } from '../endpoints.js';
import { numberToIp, parseCidr } from '../ip.js';
import { SUBNETS } from '../network.js';
import type { ScanScenario } from '../options.js';
import type { FlowSpec, SuricataAlert } from '../record.js';
import { chooseSourceHost, placeWindow, secs, toolProcess, type PlannedIncident, type ScenarioContext } from './plan.js';

export const SCAN_DEFAULTS = {
  targets: 254,
  ports: [21, 22, 23, 25, 53, 80, 110, 135, 139, 143, 443, 445, 993, 995, 1723, 3306, 3389, 5900, 8080, 8443],
  probesPerSecond: 40,
  network: SUBNETS.servers.cidr,
};

const OPEN_PORTS: Record<HostRole, number[]> = {
  dc: [53, 88, 135, 139, 389, 445, 636, 3389],
  fileserver: [135, 139, 445, 3389],
  mail: [22, 25, 587, 993],
  db: [22, 5432],
  build: [22, 443, 8080],
  backup: [22],
  app: [22, 443, 8080],
  web: [22, 80, 443],
  bastion: [22],
  workstation: [135, 139, 445],
  guest: [],
};

const ALERTS: Record<number, SuricataAlert> = {
  3306: { signature: 'ET SCAN Suspicious inbound to mySQL port 3306', signature_id: 2010937, category: 'Potentially Bad Traffic', severity: 2 },
  5900: { signature: 'ET SCAN Potential VNC Scan 5900-5920', signature_id: 2002911, category: 'Attempted Information Leak', severity: 2 },
  1723: { signature: 'ET SCAN Suspicious inbound to PPTP port 1723', signature_id: 2010938, category: 'Potentially Bad Traffic', severity: 2 },
};

export function planScan(spec: ScanScenario, ctx: ScenarioContext): PlannedIncident {
  const { rng, world } = ctx;
  const host = chooseSourceHost(ctx, spec.sourceIp, (h) => !h.admin);
  const targets = spec.targets ?? SCAN_DEFAULTS.targets;
  const ports = spec.ports ?? SCAN_DEFAULTS.ports;
  const probes = targets * ports.length;
  const window = placeWindow(ctx, spec, (probes / SCAN_DEFAULTS.probesPerSecond) * 1000, [0.2, 0.7]);
  const gapMs = (window.endMs - window.startMs) / probes;
  const processName = toolProcess(host, { windows: 'nmap.exe', macos: 'nmap', linux: 'nmap' });
  const process = namedProcess(host, processName);
  const srcPort = rng.intBetween(40000, 65000);
  const base = parseCidr(SCAN_DEFAULTS.network).base;

  // Shuffled (target, port) order, as nmap randomises both.
  const order = Array.from({ length: probes }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }

  const site = world.options.network.site;
  const dark = new Map<string, Endpoint>();
  /** Unused addresses still geolocate to the site; nothing answers there. */
  const darkAddress = (ip: string): Endpoint => {
    let ghost = dark.get(ip);
    if (!ghost) {
      ghost = internalHost(
        {
          ip,
          hostname: '',
          role: 'guest',
          os: 'linux',
          managed: false,
          admin: false,
          activity: 0,
          vlan: SUBNETS.servers.vlan,
          locationNetwork: SUBNETS.servers.cidr,
        },
        site,
      );
      dark.set(ip, ghost);
    }
    return ghost;
  };

  const flows: FlowSpec[] = [];
  order.forEach((probe, n) => {
    const ip = numberToIp(base + 1 + Math.floor(probe / ports.length));
    const port = ports[probe % ports.length];
    const live: InternalHost | undefined = world.network.byIp.get(ip);
    const open = live !== undefined && OPEN_PORTS[live.role].includes(port);
    // Windows firewalls drop closed ports silently; Linux answers with RST.
    const outcome = live === undefined ? 'unanswered' : open ? 'probed-open' : live.os === 'windows' ? 'unanswered' : 'refused';
    const flow: FlowSpec = {
      ts: Math.floor(window.startMs + n * gapMs),
      src: host,
      srcPort,
      dst: live ?? darkAddress(ip),
      dstPort: port,
      proto: 'TCP',
      app: 'UNKNOWN',
      up: outcome === 'unanswered' ? 1 : 0, // 1 = nmap retried the SYN once
      down: 0,
      durationSecs: secs(outcome === 'unanswered' ? rng.between(1, 1.5) : rng.between(0.0003, 0.0009)),
      outcome,
      contentUp: 'binary',
      contentDown: 'binary',
      gapCv: 0,
      direction: 'east-west',
      srcProcess: process,
    };
    const alert = ALERTS[port];
    if (alert !== undefined && rng.chance(0.5)) flow.alert = alert;
    flows.push(flow);
  });

  const last = numberToIp(base + targets);
  return {
    header: {
      id: '',
      kind: 'scan',
      source: { ip: host.ip, external: false, hostname: host.hostname, process: processName },
      destination: { network: SCAN_DEFAULTS.network, hosts: targets, ports: [...ports] },
      params: {
        probes,
        first_target: numberToIp(base + 1),
        last_target: last,
        src_port: srcPort,
        probes_per_second: Math.round(probes / Math.max(1, (window.endMs - window.startMs) / 1000)),
      },
    },
    flows,
  };
}
