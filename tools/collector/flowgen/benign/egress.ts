// North–south benign traffic: hosts reaching external organizations, and
// internet visitors reaching the DMZ web servers.

import { CLIENT_ISPS, type ServiceDef } from '../catalog/orgs.js';
import { PROFILES } from '../catalog/traffic.js';
import { clientProcess, ephemeralPort, namedProcess, sampleVolume, tlsVersion } from '../conversation.js';
import { endpointInOrg, type Endpoint, type InternalHost } from '../endpoints.js';
import { WeightedTable, type Prng } from '../prng.js';
import type { FlowSpec } from '../record.js';
import { org, serviceOf, type OrgRuntime, type World } from '../world.js';

export type TrafficModel = (ts: number) => FlowSpec;

export function egressSpec(ts: number, host: InternalHost, runtime: OrgRuntime, svc: ServiceDef, rng: Prng, processName?: string): FlowSpec {
  const endpoints = runtime.anycast.get(svc) ?? runtime.endpoints;
  const dst = endpoints.length === 1 ? endpoints[0] : endpoints[rng.int(endpoints.length)];
  const profile = PROFILES[svc.profile];
  const volume = sampleVolume(profile, rng);
  return {
    ts,
    src: host,
    srcPort: ephemeralPort(host, rng),
    dst,
    dstPort: svc.port,
    proto: svc.proto,
    app: svc.app,
    up: volume.up,
    down: volume.down,
    durationSecs: volume.durationSecs,
    outcome: 'ok',
    contentUp: profile.content,
    contentDown: profile.content,
    gapCv: profile.gapCv,
    direction: 'egress',
    dstFqdn: svc.fqdns.length === 1 ? svc.fqdns[0] : rng.pick(svc.fqdns),
    srcProcess: processName === undefined ? clientProcess(host, svc.client, rng) : namedProcess(host, processName),
    tlsVersion: tlsVersion(svc, rng),
    ongoing: volume.ongoing,
  };
}

export function workstationEgress(world: World, rng: Prng): TrafficModel {
  const hosts = world.network.busyWorkstations;
  return (ts) => {
    const runtime = world.workOrgs.pick(rng);
    return egressSpec(ts, hosts.pick(rng), runtime, runtime.services.pick(rng), rng);
  };
}

export function guestEgress(world: World, rng: Prng): TrafficModel {
  const hosts = world.network.busyGuests;
  return (ts) => {
    const runtime = world.consumerOrgs.pick(rng);
    return egressSpec(ts, hosts.pick(rng), runtime, runtime.services.pick(rng), rng);
  };
}

interface ServerDestination {
  org: string;
  app: string;
  profile?: string;
  process: string;
  weight: number;
}

interface ServerRole {
  hosts: InternalHost[];
  weight: number;
  destinations: ServerDestination[];
}

/** Servers reach a few providers each, for a reason (builds, mail relay, APIs, updates). */
export function serverEgress(world: World, rng: Prng): TrafficModel {
  const net = world.network;
  const apt = (weight: number): ServerDestination => ({ org: 'Canonical Group Limited', app: 'HTTP', process: 'apt', weight });
  const roles: ServerRole[] = [
    {
      hosts: [net.build],
      weight: 0.25,
      destinations: [
        { org: 'GitHub, Inc.', app: 'HTTPS', profile: 'git', process: 'git-remote-https', weight: 0.35 },
        { org: 'GitHub, Inc.', app: 'SSH', process: 'ssh', weight: 0.1 },
        { org: 'Fastly, Inc.', app: 'HTTPS', profile: 'packages', process: 'node', weight: 0.3 },
        { org: 'Amazon.com, Inc.', app: 'HTTPS', profile: 'download', process: 'dockerd', weight: 0.1 },
        { org: 'Cloudflare, Inc.', app: 'HTTPS', process: 'dockerd', weight: 0.05 },
        apt(0.1),
      ],
    },
    {
      hosts: [net.mail],
      weight: 0.15,
      destinations: [
        { org: 'Twilio Inc. (SendGrid)', app: 'SMTP', process: 'smtp', weight: 0.6 },
        { org: 'Proofpoint, Inc.', app: 'SMTP', process: 'smtp', weight: 0.4 },
      ],
    },
    {
      hosts: net.appServers,
      weight: 0.3,
      destinations: [
        { org: 'Amazon.com, Inc.', app: 'HTTPS', profile: 'api', process: 'java', weight: 0.3 },
        { org: 'Salesforce, Inc.', app: 'HTTPS', process: 'java', weight: 0.15 },
        { org: 'Twilio Inc. (SendGrid)', app: 'HTTPS', process: 'java', weight: 0.15 },
        { org: 'Okta, Inc.', app: 'HTTPS', process: 'java', weight: 0.1 },
        { org: 'Google LLC', app: 'HTTPS', profile: 'web', process: 'java', weight: 0.15 },
        { org: 'Slack Technologies, LLC', app: 'HTTPS', profile: 'api', process: 'java', weight: 0.05 },
        { org: 'Atlassian Pty Ltd', app: 'HTTPS', process: 'java', weight: 0.05 },
        apt(0.05),
      ],
    },
    {
      hosts: net.resolvers,
      weight: 0.1,
      destinations: [
        { org: 'Microsoft Corporation', app: 'HTTPS', profile: 'api', process: 'svchost.exe', weight: 0.6 },
        { org: 'Microsoft Corporation', app: 'HTTPS', profile: 'download', process: 'svchost.exe', weight: 0.2 },
        { org: 'Edgecast Inc.', app: 'HTTPS', process: 'lsass.exe', weight: 0.2 },
      ],
    },
    {
      hosts: net.webServers,
      weight: 0.1,
      destinations: [
        apt(0.5),
        { org: 'Fastly, Inc.', app: 'HTTPS', profile: 'packages', process: 'python3', weight: 0.3 },
        { org: 'Edgecast Inc.', app: 'HTTPS', process: 'nginx', weight: 0.2 },
      ],
    },
    {
      hosts: [net.db, net.backup, net.bastion],
      weight: 0.1,
      destinations: [apt(0.7), { org: 'Canonical Group Limited', app: 'HTTPS', process: 'snapd', weight: 0.3 }],
    },
  ];
  const roleTable = new WeightedTable(
    roles,
    roles.map((role) => role.weight),
  );
  const destinationTables = new Map(
    roles.map((role) => {
      const resolved = role.destinations.map((d) => {
        const runtime = org(world, d.org);
        return { runtime, svc: serviceOf(runtime, d.app, d.profile), process: d.process };
      });
      return [
        role,
        new WeightedTable(
          resolved,
          role.destinations.map((d) => d.weight),
        ),
      ];
    }),
  );
  return (ts) => {
    const role = roleTable.pick(rng);
    const host = role.hosts.length === 1 ? role.hosts[0] : rng.pick(role.hosts);
    const dest = destinationTables.get(role)!.pick(rng);
    return egressSpec(ts, host, dest.runtime, dest.svc, rng, dest.process);
  };
}

/** Visitors on residential and mobile networks browsing the public web site in the DMZ. */
export function inboundWeb(world: World, rng: Prng): TrafficModel {
  const isps = new WeightedTable(
    CLIENT_ISPS,
    CLIENT_ISPS.map((isp) => isp.weight),
  );
  const clients = new Map<string, Endpoint>();
  const site = world.options.network.site;
  const publicName = `www.${world.options.network.domain.replace(/^corp\./, '')}`;
  const profile = PROFILES.inboundWeb;
  return (ts) => {
    const isp = isps.pick(rng);
    // A bounded visitor population per ISP keeps repeat visitors realistic and memory flat.
    const index = rng.int(4096);
    const cacheKey = `${isp.asn}:${index}`;
    let client = clients.get(cacheKey);
    if (client === undefined) {
      client = endpointInOrg(isp, index, site);
      clients.set(cacheKey, client);
    }
    const server = rng.pick(world.network.webServers);
    const volume = sampleVolume(profile, rng);
    const mobileOrLinux = rng.chance(0.5);
    return {
      ts,
      src: client,
      srcPort: mobileOrLinux ? rng.intBetween(32768, 60999) : rng.intBetween(49152, 65535),
      dst: server,
      dstPort: 443,
      proto: 'TCP',
      app: 'HTTPS',
      up: volume.up,
      down: volume.down,
      durationSecs: volume.durationSecs,
      outcome: 'ok',
      contentUp: profile.content,
      contentDown: profile.content,
      gapCv: profile.gapCv,
      direction: 'ingress',
      dstFqdn: publicName,
      dstProcess: namedProcess(server, 'nginx'),
      tlsVersion: rng.chance(0.8) ? 'TLS 1.3' : 'TLS 1.2',
      ongoing: volume.ongoing,
    };
  };
}
