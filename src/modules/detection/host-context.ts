import type { HostValue } from '../investigations/investigation.model.js';
import type { DetectionPostgresStore } from './detection-postgres.store.js';

/** A collector as the narrative names it. */
export interface NodeFacts {
  id: string;
  hostname: string | null;
  os: string | null;
  localIp: string | null;
}

/** What is known about the internal host at stake, from the flows and from the collectors. */
export interface HostContext {
  /** The host's address. */
  ip: string;
  /** Best known name: its collector's hostname, else the name the flows give it. */
  hostname: string | null;
  /** A collector running on the host itself (nodes.local_ip), when there is one. */
  node: NodeFacts | null;
  /** The collectors whose flows show the activity. */
  observers: NodeFacts[];
  value: HostValue;
}

const nodeFacts = (n: { id: string; hostname: string | null; os: string | null; localIp: string | null }): NodeFacts => ({
  id: n.id,
  hostname: n.hostname,
  os: n.os,
  localIp: n.localIp,
});

/**
 * Host context from PostgreSQL: the tenant's collectors, by address (the host's own collector)
 * and by id (the collectors that reported the flows). One statement per episode.
 */
export async function loadHostContext(
  store: Pick<DetectionPostgresStore, 'collectors'>,
  customerId: string,
  host: { ip: string; fqdn: string | null },
  observerIds: string[],
): Promise<HostContext> {
  const nodes = await store.collectors(customerId, host.ip, observerIds);
  const own = nodes.find((n) => n.localIp === host.ip) ?? null;
  const hostname = own?.hostname ?? shortName(host.fqdn);
  return {
    ip: host.ip,
    hostname,
    node: own ? nodeFacts(own) : null,
    observers: nodes.filter((n) => observerIds.includes(n.id)).map(nodeFacts),
    value: hostValue(hostname ?? '', host.ip, own?.os ?? null),
  };
}

/** `ws-0004.corp.example.com` → `ws-0004`. */
export const shortName = (fqdn: string | null): string | null => (fqdn ? fqdn.split('.')[0] || null : null);

/**
 * What the host is and how much it matters, from the naming conventions most sites use (and the
 * reference collector's site follows): `dc01`, `fs01`, `db01`, `ws-0001`, `mbp-…`, guest Wi-Fi.
 */
const ROLES: [RegExp, HostValue][] = [
  [/^(dc|ad|pdc)\d*\b|domain/i, { role: 'domain controller', value: 'high', reach: 'authenticates every account of the domain and resolves its names' }],
  [/^(backup|bkp|vault)/i, { role: 'backup server', value: 'high', reach: "holds copies of the organisation's data" }],
  [/^(db|sql|pg|mysql|oracle)/i, { role: 'database server', value: 'high', reach: 'holds application data' }],
  [/^(fs|file|nas|share)/i, { role: 'file server', value: 'high', reach: 'serves the shared drives of every user' }],
  [/^(mail|mx|exch|smtp)/i, { role: 'mail server', value: 'high', reach: 'relays all mail' }],
  [/^(build|ci|jenkins|git)/i, { role: 'build server', value: 'high', reach: 'holds source code and signing material; reaches package registries' }],
  [/^(bastion|jump)/i, { role: 'bastion host', value: 'high', reach: 'the administrative entry point to the internal network' }],
  [/^(web|www|proxy|lb)/i, { role: 'internet-facing web server', value: 'moderate', reach: 'exposed to the internet (DMZ)' }],
  [/^(app|api|svc)/i, { role: 'application server', value: 'moderate', reach: 'reaches the databases it serves' }],
  [/^(dev|eng)-/i, { role: 'developer workstation', value: 'moderate', reach: "a user's workstation with source-code access" }],
  [/^(ws|pc|desktop|laptop|mbp|nb|lt)-?/i, { role: 'workstation', value: 'moderate', reach: "a user's workstation: its user's mail, files and shares" }],
];

export function hostValue(hostname: string, ip: string, os: string | null): HostValue {
  for (const [pattern, value] of ROLES) if (pattern.test(hostname)) return value;
  if (/^192\.168\./.test(ip) && !hostname) return { role: 'unmanaged device', value: 'low', reach: 'guest or unmanaged network segment' };
  return { role: os ? `internal ${os} host` : 'internal host', value: 'moderate', reach: null };
}
