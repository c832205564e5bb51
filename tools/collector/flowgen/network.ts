// The monitored site: a stable set of internal hosts across all three RFC 1918
// ranges. Servers have fixed roles and addresses; workstations and guest
// devices are numbered, with OS and activity drawn from the seed.

import type { HostOs } from './catalog/traffic.js';
import { internalHost, type HostRole, type InternalHost } from './endpoints.js';
import type { ResolvedNetwork } from './options.js';
import { Prng, WeightedTable } from './prng.js';

export const SUBNETS = {
  servers: { cidr: '10.10.0.0/24', vlan: 10 },
  apps: { cidr: '10.10.1.0/24', vlan: 11 },
  workstations: { cidr: '10.20.0.0/16', vlan: 20 },
  dmz: { cidr: '172.16.10.0/24', vlan: 30 },
  guest: { cidr: '192.168.50.0/23', vlan: 50 },
} as const;

export interface SiteNetwork {
  domain: string;
  workstations: InternalHost[];
  admins: InternalHost[];
  guests: InternalHost[];
  /** The domain controllers double as the site's DNS resolvers. */
  resolvers: InternalHost[];
  fileServer: InternalHost;
  mail: InternalHost;
  db: InternalHost;
  build: InternalHost;
  backup: InternalHost;
  appServers: InternalHost[];
  webServers: InternalHost[];
  bastion: InternalHost;
  servers: InternalHost[];
  /** Every host with an agent (workstations and servers). */
  managed: InternalHost[];
  byIp: Map<string, InternalHost>;
  /** Workstations weighted by activity. */
  busyWorkstations: WeightedTable<InternalHost>;
  busyGuests: WeightedTable<InternalHost>;
}

const WORKSTATION_NAMES: Record<HostOs, string> = { windows: 'ws', macos: 'mbp', linux: 'dev' };

export function buildNetwork(config: ResolvedNetwork, rng: Prng): SiteNetwork {
  const { domain, site } = config;
  const server = (hostname: string, ip: string, role: HostRole, os: HostOs, subnet: keyof typeof SUBNETS) =>
    internalHost(
      {
        ip,
        hostname,
        fqdn: `${hostname}.${domain}`,
        role,
        os,
        managed: true,
        admin: false,
        activity: 1,
        vlan: SUBNETS[subnet].vlan,
        locationNetwork: SUBNETS[subnet].cidr,
      },
      site,
    );

  const resolvers = [server('dc01', '10.10.0.10', 'dc', 'windows', 'servers'), server('dc02', '10.10.0.11', 'dc', 'windows', 'servers')];
  const fileServer = server('fs01', '10.10.0.20', 'fileserver', 'windows', 'servers');
  const mail = server('mail01', '10.10.0.25', 'mail', 'linux', 'servers');
  const db = server('db01', '10.10.0.30', 'db', 'linux', 'servers');
  const build = server('build01', '10.10.0.40', 'build', 'linux', 'servers');
  const backup = server('backup01', '10.10.0.50', 'backup', 'linux', 'servers');
  const appServers: InternalHost[] = [];
  for (let i = 0; i < config.appServers; i++) {
    appServers.push(server(`app${String(i + 1).padStart(2, '0')}`, `10.10.1.${10 + i}`, 'app', 'linux', 'apps'));
  }
  const webServers = [server('web01', '172.16.10.10', 'web', 'linux', 'dmz'), server('web02', '172.16.10.11', 'web', 'linux', 'dmz')];
  const bastion = server('bastion01', '172.16.10.5', 'bastion', 'linux', 'dmz');

  const workstations: InternalHost[] = [];
  for (let i = 0; i < config.workstations; i++) {
    const roll = rng.next();
    const os: HostOs = roll < 0.7 ? 'windows' : roll < 0.9 ? 'macos' : 'linux';
    const hostname = `${WORKSTATION_NAMES[os]}-${String(i + 1).padStart(4, '0')}`;
    workstations.push(
      internalHost(
        {
          ip: `10.20.${1 + Math.floor(i / 240)}.${10 + (i % 240)}`,
          hostname,
          fqdn: `${hostname}.${domain}`,
          role: 'workstation',
          os,
          managed: true,
          // The first few workstations belong to IT: they are the only ones that SSH and RDP internally.
          admin: i < Math.max(2, Math.round(config.workstations / 40)),
          activity: rng.logNormal(1, 0.5),
          vlan: SUBNETS.workstations.vlan,
          locationNetwork: SUBNETS.workstations.cidr,
        },
        site,
      ),
    );
  }

  const guests: InternalHost[] = [];
  for (let i = 0; i < config.guestDevices; i++) {
    const ip = `192.168.${50 + Math.floor((i + 20) / 256)}.${(i + 20) % 256}`;
    guests.push(
      internalHost(
        {
          ip,
          hostname: `dhcp-${ip.replaceAll('.', '-')}`,
          fqdn: `dhcp-${ip.replaceAll('.', '-')}.guest.${domain}`,
          role: 'guest',
          // Phones and personal laptops: no agent, so no process; os only shapes ports.
          os: rng.chance(0.6) ? 'macos' : 'linux',
          managed: false,
          admin: false,
          activity: rng.logNormal(1, 0.7),
          vlan: SUBNETS.guest.vlan,
          locationNetwork: SUBNETS.guest.cidr,
        },
        site,
      ),
    );
  }

  const servers = [...resolvers, fileServer, mail, db, build, backup, ...appServers, ...webServers, bastion];
  const managed = [...workstations, ...servers];
  const byIp = new Map<string, InternalHost>();
  for (const host of [...managed, ...guests]) byIp.set(host.ip, host);

  return {
    domain,
    workstations,
    admins: workstations.filter((host) => host.admin),
    guests,
    resolvers,
    fileServer,
    mail,
    db,
    build,
    backup,
    appServers,
    webServers,
    bastion,
    servers,
    managed,
    byIp,
    busyWorkstations: new WeightedTable(
      workstations,
      workstations.map((host) => host.activity),
    ),
    busyGuests: new WeightedTable(
      guests,
      guests.map((host) => host.activity),
    ),
  };
}
