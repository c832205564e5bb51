// DNS tunnelling: one workstation smuggles data in long base32 labels under
// one rare domain, through the site resolver. Every name is new, so every
// query misses the cache and the resolver forwards it to the domain's
// authoritative server at a rare hosting provider: two flows per query.

import { RARE_ORGS } from '../catalog/orgs.js';
import { dnsQuerySize, dnsResponseSize, namedProcess } from '../conversation.js';
import { endpointInOrg } from '../endpoints.js';
import type { DnsTunnelScenario } from '../options.js';
import type { Prng } from '../prng.js';
import type { FlowSpec } from '../record.js';
import { chooseSourceHost, placeWindow, secs, toolProcess, type PlannedIncident, type ScenarioContext } from './plan.js';

export const DNS_TUNNEL_DEFAULTS = {
  queries: [2000, 4000] as [number, number],
  durationMs: 30 * 60_000,
  /** Data label length (the DNS limit is 63). */
  labelLength: [48, 63] as [number, number],
};

const DOMAINS = ['cdn-metrics-sync.com', 'azure-telemetry-check.net', 'static-update-cache.org'];
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

function base32Label(rng: Prng, length: number): string {
  let label = '';
  for (let i = 0; i < length; i++) label += BASE32[rng.int(32)];
  return label;
}

export function planDnsTunnel(spec: DnsTunnelScenario, ctx: ScenarioContext): PlannedIncident {
  const { rng, world } = ctx;
  const host = chooseSourceHost(ctx, spec.sourceIp, (h) => !h.admin);
  const resolver = world.network.resolvers[0];
  const rare = RARE_ORGS.dnsTunnel[ctx.ordinal % RARE_ORGS.dnsTunnel.length];
  const nameServer = endpointInOrg(rare, 400 + ctx.ordinal, world.options.network.site);
  const domain = spec.domain ?? DOMAINS[(ctx.ordinal + rng.int(DOMAINS.length)) % DOMAINS.length];
  const nsName = `ns1.${domain}`;
  const queries = spec.queries ?? rng.intBetween(...DNS_TUNNEL_DEFAULTS.queries);
  const window = placeWindow(ctx, spec, DNS_TUNNEL_DEFAULTS.durationMs, [0.2, 0.6]);
  const processName = toolProcess(host, { windows: 'powershell.exe', macos: 'dnscat', linux: 'dnscat' });
  const clientProcess = namedProcess(host, processName);
  const resolverProcess = namedProcess(resolver, 'dns.exe');
  const session = base32Label(rng, 4);

  const flows: FlowSpec[] = [];
  const instants = Array.from({ length: queries }, () => window.startMs + rng.next() * (window.endMs - window.startMs)).sort((a, b) => a - b);
  instants.forEach((t, seq) => {
    const dataLabels = rng.chance(0.5) ? 2 : 1;
    const labels: string[] = [];
    for (let i = 0; i < dataLabels; i++) labels.push(base32Label(rng, rng.intBetween(...DNS_TUNNEL_DEFAULTS.labelLength)));
    const rrname = `${labels.join('.')}.${session}${seq.toString(16).padStart(4, '0')}.${domain}`;
    const roll = rng.next();
    const rrtype = roll < 0.7 ? 'TXT' : roll < 0.8 ? 'NULL' : 'CNAME';
    const question = { rrname, rrtype, rcode: 'NOERROR' };
    const up = dnsQuerySize(rrname);
    const down = dnsResponseSize(rrname, rrtype, 1, 'NOERROR');
    const upstreamRtt = nameServer.rtt * rng.logNormal(1.1, 0.15);
    const ts = Math.floor(t);
    const common = {
      proto: 'UDP' as const,
      app: 'DNS' as const,
      dstPort: 53,
      up,
      down,
      outcome: 'ok' as const,
      contentUp: 'encoded' as const,
      contentDown: 'encoded' as const,
      gapCv: 0,
    };
    flows.push({
      ...common,
      ts,
      src: host,
      srcPort: rng.intBetween(host.ephemeralLo, host.ephemeralHi),
      dst: resolver,
      durationSecs: secs(upstreamRtt + 0.0008),
      direction: 'east-west',
      srcProcess: clientProcess,
      dstProcess: resolverProcess,
      dns: question,
    });
    flows.push({
      ...common,
      ts: ts + 1,
      src: resolver,
      srcPort: rng.intBetween(49152, 65535),
      dst: nameServer,
      durationSecs: secs(upstreamRtt),
      direction: 'egress',
      dstFqdn: nsName,
      srcProcess: resolverProcess,
      dns: { ...question },
    });
  });
  flows.sort((a, b) => a.ts - b.ts);

  return {
    header: {
      id: '',
      kind: 'dns-tunnel',
      source: { ip: host.ip, external: false, hostname: host.hostname, process: processName },
      destination: { ip: nameServer.ip, org: rare.name, port: 53, fqdn: nsName },
      params: { queries, domain, resolver_ip: resolver.ip, flows_per_query: 2 },
    },
    flows,
  };
}
