// DNS as a site really does it: clients ask the domain controllers, which
// answer from cache or forward misses to public resolvers.

import { dnsQuerySize, dnsResponseSize, clientProcess, ephemeralPort, namedProcess } from '../conversation.js';
import type { Endpoint } from '../endpoints.js';
import type { Prng } from '../prng.js';
import type { FlowSpec } from '../record.js';
import type { World } from '../world.js';
import type { TrafficModel } from './egress.js';

interface Question {
  rrname: string;
  rrtype: string;
  rcode: string;
}

const RESOLVER_NAMES: Record<string, string> = {
  'Google LLC': 'dns.google',
  'Cloudflare, Inc.': 'one.one.one.one',
  Quad9: 'dns9.quad9.net',
};

/** Questions about public names follow destination popularity; ~20% ask about the AD domain. */
function questions(world: World, rng: Prng): (internalShare: number) => Question {
  const domain = world.options.network.domain;
  const net = world.network;
  const internal: Question[] = [
    { rrname: `_ldap._tcp.dc._msdcs.${domain}`, rrtype: 'SRV', rcode: 'NOERROR' },
    { rrname: `_kerberos._tcp.${domain}`, rrtype: 'SRV', rcode: 'NOERROR' },
    ...net.resolvers.map((h) => ({ rrname: h.fqdn!, rrtype: 'A', rcode: 'NOERROR' })),
    { rrname: net.fileServer.fqdn!, rrtype: 'A', rcode: 'NOERROR' },
    ...net.appServers.map((h) => ({ rrname: h.fqdn!, rrtype: 'A', rcode: 'NOERROR' })),
    { rrname: `wpad.${domain}`, rrtype: 'A', rcode: 'NXDOMAIN' },
    { rrname: '10.0.10.10.in-addr.arpa', rrtype: 'PTR', rcode: 'NOERROR' },
  ];
  return (internalShare) => {
    if (rng.chance(internalShare)) return rng.pick(internal);
    const runtime = world.workOrgs.pick(rng);
    const svc = runtime.services.pick(rng);
    const roll = rng.next();
    return {
      rrname: svc.fqdns.length === 1 ? svc.fqdns[0] : rng.pick(svc.fqdns),
      rrtype: roll < 0.6 ? 'A' : roll < 0.9 ? 'AAAA' : 'HTTPS',
      rcode: rng.chance(0.01) ? 'SERVFAIL' : 'NOERROR',
    };
  };
}

function dnsSpec(
  ts: number,
  src: Endpoint,
  srcPort: number,
  dst: Endpoint,
  question: Question,
  durationSecs: number,
  direction: FlowSpec['direction'],
  rng: Prng,
): FlowSpec {
  return {
    ts,
    src,
    srcPort,
    dst,
    dstPort: 53,
    proto: 'UDP',
    app: 'DNS',
    up: dnsQuerySize(question.rrname),
    down: dnsResponseSize(question.rrname, question.rrtype, 1 + rng.int(3), question.rcode),
    durationSecs: Math.round(durationSecs * 1e6) / 1e6,
    outcome: 'ok',
    contentUp: 'dns',
    contentDown: 'dns',
    gapCv: 0,
    direction,
    dns: question,
  };
}

export function workstationDns(world: World, rng: Prng): TrafficModel {
  const ask = questions(world, rng);
  const [primary, secondary] = world.network.resolvers;
  return (ts) => {
    const host = world.network.busyWorkstations.pick(rng);
    const resolver = rng.chance(0.75) ? primary : secondary;
    // Cache hits answer in well under a millisecond; misses wait for the upstream.
    const duration = rng.chance(0.7) ? rng.logNormal(0.0006, 0.4) : rng.logNormal(0.025, 0.8);
    const spec = dnsSpec(ts, host, ephemeralPort(host, rng), resolver, ask(0.2), duration, 'east-west', rng);
    spec.srcProcess = clientProcess(host, 'dnsClient', rng);
    spec.dstProcess = namedProcess(resolver, 'dns.exe');
    return spec;
  };
}

export function resolverUpstream(world: World, rng: Prng): TrafficModel {
  const ask = questions(world, rng);
  return (ts) => {
    const resolver = rng.pick(world.network.resolvers);
    const upstream = world.upstreamResolvers.pick(rng);
    const spec = dnsSpec(ts, resolver, rng.intBetween(49152, 65535), upstream, ask(0), upstream.rtt * rng.logNormal(1.1, 0.2), 'egress', rng);
    spec.dstFqdn = RESOLVER_NAMES[upstream.organization!];
    spec.srcProcess = namedProcess(resolver, 'dns.exe');
    return spec;
  };
}
