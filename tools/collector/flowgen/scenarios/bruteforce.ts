// Password guessing: one source opens hundreds of short sessions against one
// login service, each a complete handshake, a failed authentication and a
// close. From the internet (SSH on the DMZ bastion, with threat-intel and
// IDS hits) or from a compromised workstation (RDP or SMB on a server).

import { RARE_ORGS } from '../catalog/orgs.js';
import { namedProcess } from '../conversation.js';
import { endpointInOrg, type Endpoint, type InternalHost } from '../endpoints.js';
import type { BruteforceScenario } from '../options.js';
import type { FlowSpec, SuricataAlert } from '../record.js';
import type { ThreatFields } from '../types.js';
import { chooseSourceHost, placeWindow, secs, toolProcess, type PlannedIncident, type ScenarioContext } from './plan.js';

export const BRUTEFORCE_DEFAULTS = {
  attempts: [300, 600] as [number, number],
  durationMs: 15 * 60_000,
};

interface LoginService {
  app: 'SSH' | 'RDP' | 'SMB';
  port: number;
  serverProcess: string;
  up: number;
  down: number;
  seconds: [number, number];
}

/** One failed login, as bytes on the wire: key exchange plus an auth failure, or NLA, or SMB session setup. */
const SERVICES: Record<'ssh' | 'rdp' | 'smb', LoginService> = {
  ssh: { app: 'SSH', port: 22, serverProcess: 'sshd', up: 2100, down: 2900, seconds: [1.2, 4] },
  rdp: { app: 'RDP', port: 3389, serverProcess: 'svchost.exe', up: 3500, down: 6000, seconds: [0.8, 3] },
  smb: { app: 'SMB', port: 445, serverProcess: 'System', up: 1500, down: 1200, seconds: [0.04, 0.2] },
};

const SSH_SCAN_ALERT: SuricataAlert = {
  signature: 'ET SCAN Potential SSH Scan',
  signature_id: 2001219,
  category: 'Attempted Information Leak',
  severity: 2,
};

export function planBruteforce(spec: BruteforceScenario, ctx: ScenarioContext): PlannedIncident {
  const { rng, world } = ctx;
  const net = world.network;
  const serviceName = spec.service ?? 'ssh';
  const service = SERVICES[serviceName];
  const external = spec.external ?? serviceName === 'ssh';
  const target: InternalHost = serviceName === 'ssh' ? (external ? net.bastion : net.db) : serviceName === 'rdp' ? net.fileServer : net.resolvers[0];

  let src: Endpoint;
  let srcProcess: string | undefined;
  let source: PlannedIncident['header']['source'];
  let threat: ThreatFields | undefined;
  if (external) {
    const rare = RARE_ORGS.bruteforce[ctx.ordinal % RARE_ORGS.bruteforce.length];
    src = endpointInOrg(rare, 300 + ctx.ordinal * 7 + rng.int(1000), world.options.network.site);
    source = { ip: src.ip, external: true, org: rare.name };
    threat = {
      indicator: src.ip,
      type: 'ip',
      trajectory: 'inbound',
      ip: src.ip,
      mask: 32,
      posture: ['attacker', 'scanner'],
      tags: [`${serviceName}-bruteforce`],
      feeds: ['blocklist.de', 'abuseipdb'],
      countermeasures: ['block-ip'],
    };
  } else {
    const host = chooseSourceHost(ctx, spec.sourceIp, (h) => !h.admin);
    const processName = toolProcess(host, { windows: 'powershell.exe', macos: 'hydra', linux: 'hydra' });
    src = host;
    srcProcess = namedProcess(host, processName);
    source = { ip: host.ip, external: false, hostname: host.hostname, process: processName };
  }

  const attempts = spec.attempts ?? rng.intBetween(...BRUTEFORCE_DEFAULTS.attempts);
  const window = placeWindow(ctx, spec, BRUTEFORCE_DEFAULTS.durationMs, [0.3, 0.7]);
  // Attempts arrive at uniformly random instants in the window (several parallel workers).
  const instants = Array.from({ length: attempts }, () => window.startMs + rng.next() * (window.endMs - window.startMs)).sort((a, b) => a - b);
  const dstProcess = namedProcess(target, service.serverProcess);
  const flows: FlowSpec[] = instants.map((t, n) => {
    const flow: FlowSpec = {
      ts: Math.floor(t),
      src,
      srcPort: rng.intBetween(external ? 32768 : 49152, external ? 60999 : 65535),
      dst: target,
      dstPort: service.port,
      proto: 'TCP',
      app: service.app,
      up: Math.round(rng.logNormal(service.up, 0.08)),
      down: Math.round(rng.logNormal(service.down, 0.08)),
      durationSecs: secs(rng.between(...service.seconds)),
      outcome: 'ok',
      contentUp: serviceName === 'smb' ? 'binary' : 'encrypted',
      contentDown: serviceName === 'smb' ? 'binary' : 'encrypted',
      gapCv: 0.8,
      direction: external ? 'ingress' : 'east-west',
      srcProcess,
      dstProcess,
    };
    if (threat) flow.threat = threat;
    // The IDS rule fires on bursts of new SSH sessions (5 in 120 s); mark every fifth.
    if (serviceName === 'ssh' && n % 5 === 4) flow.alert = SSH_SCAN_ALERT;
    return flow;
  });

  return {
    header: {
      id: '',
      kind: 'bruteforce',
      source,
      destination: { ip: target.ip, port: service.port, fqdn: target.fqdn },
      params: { attempts, service: serviceName },
    },
    flows,
  };
}
