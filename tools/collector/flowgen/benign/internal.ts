// East–west benign traffic: directory, file shares, internal apps, and the
// few admin sessions. Each workstation touches only a handful of internal
// services, which is what keeps benign traffic far from scan thresholds.

import type { AppName } from '../catalog/orgs.js';
import { PROFILES, type ClientKind, type ProfileName } from '../catalog/traffic.js';
import { clientProcess, ephemeralPort, namedProcess, sampleVolume } from '../conversation.js';
import type { InternalHost } from '../endpoints.js';
import { WeightedTable, type Prng } from '../prng.js';
import type { FlowSpec } from '../record.js';
import type { World } from '../world.js';
import type { TrafficModel } from './egress.js';

interface InternalService {
  weight: number;
  app: AppName;
  proto: 'TCP' | 'UDP';
  port: number;
  profile: ProfileName;
  clients: (rng: Prng) => InternalHost;
  servers: InternalHost[];
  client: ClientKind | { process: string };
  serverProcess: string;
  tls13?: number;
}

/** Share of internal TCP attempts that hit a closed port (stale config, a service restarting). */
const REFUSED_SHARE = 0.002;

export function eastWest(world: World, rng: Prng): TrafficModel {
  const net = world.network;
  const workstation = () => net.busyWorkstations.pick(rng);
  const admin = () => rng.pick(net.admins);
  const appServer = () => rng.pick(net.appServers);
  const services: InternalService[] = [
    {
      weight: 0.28,
      app: 'LDAP',
      proto: 'TCP',
      port: 389,
      profile: 'ldap',
      clients: workstation,
      servers: net.resolvers,
      client: 'directory',
      serverProcess: 'lsass.exe',
    },
    {
      weight: 0.12,
      app: 'KERBEROS',
      proto: 'TCP',
      port: 88,
      profile: 'kerberos',
      clients: workstation,
      servers: net.resolvers,
      client: 'directory',
      serverProcess: 'lsass.exe',
    },
    {
      weight: 0.1,
      app: 'KERBEROS',
      proto: 'UDP',
      port: 88,
      profile: 'kerberos',
      clients: workstation,
      servers: net.resolvers,
      client: 'directory',
      serverProcess: 'lsass.exe',
    },
    {
      weight: 0.25,
      app: 'SMB',
      proto: 'TCP',
      port: 445,
      profile: 'smb',
      clients: workstation,
      servers: [net.fileServer],
      client: 'smb',
      serverProcess: 'System',
    },
    {
      weight: 0.12,
      app: 'HTTPS',
      proto: 'TCP',
      port: 443,
      profile: 'intranet',
      clients: workstation,
      servers: net.appServers,
      client: 'browser',
      serverProcess: 'java',
      tls13: 0.7,
    },
    {
      weight: 0.1,
      app: 'POSTGRESQL',
      proto: 'TCP',
      port: 5432,
      profile: 'postgres',
      clients: appServer,
      servers: [net.db],
      client: { process: 'java' },
      serverProcess: 'postgres',
    },
    {
      weight: 0.02,
      app: 'SSH',
      proto: 'TCP',
      port: 22,
      profile: 'ssh',
      clients: admin,
      servers: [net.bastion, net.build, net.db],
      client: 'ssh',
      serverProcess: 'sshd',
    },
    {
      weight: 0.01,
      app: 'RDP',
      proto: 'TCP',
      port: 3389,
      profile: 'rdp',
      clients: admin,
      servers: [...net.resolvers, net.fileServer],
      client: 'rdp',
      serverProcess: 'svchost.exe',
    },
  ];
  const table = new WeightedTable(
    services,
    services.map((s) => s.weight),
  );
  return (ts) => {
    const svc = table.pick(rng);
    const src = svc.clients(rng);
    const dst = svc.servers.length === 1 ? svc.servers[0] : rng.pick(svc.servers);
    const profile = PROFILES[svc.profile];
    const refused = svc.proto === 'TCP' && rng.chance(REFUSED_SHARE);
    const volume = sampleVolume(profile, rng);
    const spec: FlowSpec = {
      ts,
      src,
      srcPort: ephemeralPort(src, rng),
      dst,
      dstPort: svc.port,
      proto: svc.proto,
      app: refused ? 'UNKNOWN' : svc.app,
      up: refused ? 0 : volume.up,
      down: refused ? 0 : volume.down,
      durationSecs: refused ? 0.0005 : volume.durationSecs,
      outcome: refused ? 'refused' : 'ok',
      contentUp: profile.content,
      contentDown: profile.content,
      gapCv: profile.gapCv,
      direction: 'east-west',
      srcProcess: typeof svc.client === 'string' ? clientProcess(src, svc.client, rng) : namedProcess(src, svc.client.process),
      dstProcess: refused ? undefined : namedProcess(dst, svc.serverProcess),
      ongoing: !refused && volume.ongoing,
    };
    if (svc.tls13 !== undefined && !refused) spec.tlsVersion = rng.chance(svc.tls13) ? 'TLS 1.3' : 'TLS 1.2';
    return spec;
  };
}
