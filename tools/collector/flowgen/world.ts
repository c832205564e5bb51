// Everything a generator run shares: the resolved options, the site's hosts,
// the external organizations with their addresses, and the popularity tables.

import { BENIGN_ORGS, UPSTREAM_RESOLVERS, type OrgDef, type ServiceDef } from './catalog/orgs.js';
import { anycastEndpoints, orgEndpoints, type Endpoint } from './endpoints.js';
import { buildNetwork, type SiteNetwork } from './network.js';
import type { ResolvedOptions } from './options.js';
import { Prng, WeightedTable, zipfWeights } from './prng.js';
import type { RecordContext } from './record.js';

export interface OrgRuntime {
  def: OrgDef;
  endpoints: Endpoint[];
  services: WeightedTable<ServiceDef>;
  anycast: Map<ServiceDef, Endpoint[]>;
}

export interface World {
  options: ResolvedOptions;
  network: SiteNetwork;
  orgs: Map<string, OrgRuntime>;
  /** Managed hosts' destinations, Zipf over catalog order. */
  workOrgs: WeightedTable<OrgRuntime>;
  /** Guest Wi-Fi destinations. */
  consumerOrgs: WeightedTable<OrgRuntime>;
  upstreamResolvers: WeightedTable<Endpoint>;
  record: RecordContext;
}

/** Popularity skew of destinations: rank 1 gets ~2× rank 2, ~10× rank 10. */
export const ORG_ZIPF_EXPONENT = 1.0;

export function buildWorld(options: ResolvedOptions): World {
  const root = Prng.from(options.seed);
  const site = options.network.site;
  const network = buildNetwork(options.network, root.fork('network'));

  const orgs = new Map<string, OrgRuntime>();
  BENIGN_ORGS.forEach((def, rank) => {
    const anycast = new Map<ServiceDef, Endpoint[]>();
    for (const svc of def.services) if (svc.anycast) anycast.set(svc, anycastEndpoints(def, svc.anycast, site));
    orgs.set(def.name, {
      def,
      endpoints: orgEndpoints(def, rank < 10 ? 8 : 4, site),
      services: new WeightedTable(
        def.services,
        def.services.map((svc) => svc.weight),
      ),
      anycast,
    });
  });

  const reachable = (audiences: string[]) => BENIGN_ORGS.filter((def) => audiences.includes(def.audience)).map((def) => orgs.get(def.name)!);
  const work = reachable(['work', 'both']);
  const consumer = reachable(['consumer', 'both']);

  const upstream: Endpoint[] = [];
  const upstreamWeights: number[] = [];
  for (const resolver of UPSTREAM_RESOLVERS) {
    const def = orgs.get(resolver.org)!.def;
    for (const ep of anycastEndpoints(def, resolver, site)) {
      upstream.push(ep);
      upstreamWeights.push(resolver.weight);
    }
  }

  const domain = options.network.domain;
  return {
    options,
    network,
    orgs,
    workOrgs: new WeightedTable(work, zipfWeights(work.length, ORG_ZIPF_EXPONENT)),
    consumerOrgs: new WeightedTable(consumer, zipfWeights(consumer.length, ORG_ZIPF_EXPONENT)),
    upstreamResolvers: new WeightedTable(upstream, upstreamWeights),
    record: {
      customerId: options.customerId,
      siteTag: `site:${options.network.siteName}`,
      sensor: {
        id: options.nodeId,
        type: 'packet',
        name: `${options.network.siteName}-edge-01`,
        hostname: `sensor01.${domain}`,
        interface: 'eth1',
      },
    },
  };
}

export function org(world: World, name: string): OrgRuntime {
  const found = world.orgs.get(name);
  if (!found) throw new Error(`unknown org ${name}`);
  return found;
}

/** The org's service for an app (and profile, when the org offers the app more than once). */
export function serviceOf(runtime: OrgRuntime, app: string, profile?: string): ServiceDef {
  const svc = runtime.def.services.find((s) => s.app === app && (profile === undefined || s.profile === profile));
  if (!svc) throw new Error(`${runtime.def.name} has no ${app} service${profile ? ` with profile ${profile}` : ''}`);
  return svc;
}
