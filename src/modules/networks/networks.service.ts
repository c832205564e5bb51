/**
 * Own networks (docs/networks.md): per tenant, CIDR ranges an operator names, each an internal
 * site or an external organization. Explore and detection consult them before the public IP →
 * organization dataset. Reading and changing them needs node_api (like the tenant's other
 * collector-side settings) and sees only the caller's tree: a parent MSP manages its children's.
 */
import { type Session, type TenantScope, customerNotFound } from '../../auth/session.js';
import { DomainError, notFound } from '../../errors.js';
import type { OwnNetworkRange } from '../../flowstore/index.js';
import type { OwnNetwork } from '../../generated/prisma/client.js';
import { nameProblem } from '../../infra/text.js';
import { type Cidr, parseNetwork } from './cidr.js';
import type { OwnNetworkRow, OwnNetworkStore } from './networks.store.js';

export const OWN_NETWORK_LIMITS = { perTenant: 1000, name: 200 } as const;
export const OWN_NETWORK_KINDS = ['internal', 'external'] as const;
export type OwnNetworkKind = (typeof OWN_NETWORK_KINDS)[number];

/** One network as a request (or an imported file) gives it. */
export interface OwnNetworkInput {
  cidr?: unknown;
  name?: unknown;
  kind?: unknown;
}

/** A tenant's list after a change. */
export interface OwnNetworkList {
  customerId: string;
  networks: OwnNetwork[];
}

const invalid = (field: string, message: string) => new DomainError(400, 'validation_error', message, { body: { field }, details: { field } });

export class OwnNetworkService {
  constructor(private readonly store: OwnNetworkStore) {}

  /** The networks of the caller's tree, or of one tenant in it, each tenant's by address. */
  async list(session: Session, customerId?: string | null): Promise<OwnNetwork[]> {
    session.assert('networks.read');
    const scope = await session.tenantScope();
    const only = customerId ? [await this.visibleCustomer(session, 'networks.read', customerId)] : undefined;
    return byAddress(await this.store.list(scope, only));
  }

  /** Makes `networks` the tenant's whole list (an empty one clears it). */
  replace(session: Session, customerId: string | null | undefined, networks: readonly OwnNetworkInput[]): Promise<OwnNetworkList> {
    return this.change(session, customerId, () => replacing(readNetworks(networks)));
  }

  /** Adds networks to the tenant's list; a network it already has is refused (409), not overwritten. */
  add(session: Session, customerId: string | null | undefined, networks: readonly OwnNetworkInput[]): Promise<OwnNetworkList> {
    return this.change(session, customerId, () => adding(readNetworks(networks)));
  }

  /** One tenant's networks by address, for the admin CLI (the operator holds the database: no session). */
  async listOf(customerId: string): Promise<OwnNetwork[]> {
    return byAddress(await this.store.list({ customerId, tenantIds: new Set([customerId]) }));
  }

  /**
   * The admin CLI's import of a file (networks.file.ts): the operator holds the database, so no
   * session; the same checks and limits, each entry named by `at` (its line).
   */
  async importFile(customerId: string, networks: readonly OwnNetworkInput[], mode: 'replace' | 'add', at: (i: number) => string): Promise<OwnNetworkList> {
    const rows = readNetworks(networks, at);
    return this.write({ customerId, tenantIds: new Set([customerId]) }, customerId, mode === 'replace' ? replacing(rows) : adding(rows));
  }

  /** Removes networks by CIDR (any spelling of the same network); a CIDR the tenant does not have is a 404 and nothing is removed. */
  remove(session: Session, customerId: string | null | undefined, cidrs: readonly string[]): Promise<OwnNetworkList> {
    return this.change(session, customerId, () => {
      if (cidrs.length > OWN_NETWORK_LIMITS.perTenant) throw invalid('cidrs', `at most ${OWN_NETWORK_LIMITS.perTenant} cidrs per request`);
      const removing = new Set(cidrs.map((raw, i) => readCidr(raw, `cidrs[${i}]`).text));
      return (current) => {
        const missing = [...removing].filter((cidr) => !current.some((n) => n.cidr === cidr));
        if (missing.length) throw notFound('own_network_not_found', `Not among the tenant's networks: ${missing.slice(0, 10).join(', ')}`);
        return rowsOf(current.filter((n) => !removing.has(n.cidr)));
      };
    });
  }

  /**
   * The networks of tenants the caller was already authorized for (explore's instances, a
   * detection run's tenant), as address ranges for the flow store.
   */
  async rangesOf(customerIds: readonly string[]): Promise<OwnNetworkRange[]> {
    if (!customerIds.length) return [];
    const scope: TenantScope = { customerId: customerIds[0]!, tenantIds: new Set(customerIds) };
    return (await this.store.list(scope)).map((n) => {
      const cidr = parseNetwork(n.cidr) as Cidr;
      return { customerId: n.customerId, lo: cidr.lo, hi: cidr.hi, name: n.name, internal: n.kind === 'internal' };
    });
  }

  /** The scope first (403), then the request (400), then the tenant (404), then the write. */
  private async change(session: Session, customerId: string | null | undefined, checked: () => Change): Promise<OwnNetworkList> {
    session.assert('networks.write');
    const scope = await session.tenantScope();
    const next = checked();
    return this.write(scope, await this.visibleCustomer(session, 'networks.write', customerId || session.customerId), next);
  }

  private async write(scope: TenantScope, id: string, next: Change): Promise<OwnNetworkList> {
    const networks = await this.store
      .change(scope, id, (current) => {
        const wanted = next(current);
        if (wanted.length > OWN_NETWORK_LIMITS.perTenant) {
          throw new DomainError(
            409,
            'own_network_limit_reached',
            `A tenant may have at most ${OWN_NETWORK_LIMITS.perTenant} networks (this change would leave ${wanted.length})`,
          );
        }
        return wanted;
      })
      .catch((error) => {
        // The tenant was deleted between the tree lookup and the write.
        if ((error as { code?: string }).code === 'P2003') throw customerNotFound(id);
        throw error;
      });
    return { customerId: id, networks: byAddress(networks) };
  }

  /** The named tenant, blanks trimmed, once the session has found it in the caller's tree. */
  private async visibleCustomer(session: Session, action: 'networks.read' | 'networks.write', customerId: string): Promise<string> {
    const id = customerId.trim();
    await session.assertTenant(action, id);
    return id;
  }
}

/** What a change makes of the tenant's current list (it may throw to refuse). */
type Change = (current: OwnNetwork[]) => OwnNetworkRow[];
type Checked = { row: OwnNetworkRow; field: string }[];

const rowsOf = (networks: OwnNetwork[]): OwnNetworkRow[] => networks.map(({ cidr, name, kind }) => ({ cidr, name, kind: kind as OwnNetworkKind }));

const replacing =
  (wanted: Checked): Change =>
  () =>
    wanted.map((n) => n.row);

const adding =
  (added: Checked): Change =>
  (current) => {
    const have = new Map(current.map((n) => [n.cidr, n]));
    const clash = added.find((n) => have.has(n.row.cidr));
    if (clash) {
      throw new DomainError(
        409,
        'own_network_exists',
        `${clash.field}: ${clash.row.cidr} is already mapped to ${have.get(clash.row.cidr)!.name}; remove it first, or replace the list`,
        {
          body: { field: clash.field },
          details: { field: clash.field },
        },
      );
    }
    return [...rowsOf(current), ...added.map((n) => n.row)];
  };

/**
 * Checks a list: every CIDR valid and canonical-able, every name a proper name, every kind known,
 * no network twice (in any spelling). Nested networks are fine: the most specific one wins.
 * `at` names entry i in messages (`networks[i]`, or a file's line).
 */
export function readNetworks(networks: readonly OwnNetworkInput[], at: (i: number) => string = (i) => `networks[${i}]`): Checked {
  if (networks.length > OWN_NETWORK_LIMITS.perTenant) throw invalid('networks', `at most ${OWN_NETWORK_LIMITS.perTenant} networks per tenant`);
  const seen = new Map<string, string>();
  return networks.map((n, i) => {
    const entry = at(i);
    const cidr = readCidr(n.cidr, `${entry}.cidr`);
    const twice = seen.get(cidr.text);
    if (twice) throw invalid(`${entry}.cidr`, `${entry}.cidr ${cidr.text} is given twice (also ${twice})`);
    seen.set(cidr.text, entry);
    return { row: { cidr: cidr.text, name: readName(n.name, `${entry}.name`), kind: readKind(n.kind, `${entry}.kind`) }, field: `${entry}.cidr` };
  });
}

function readCidr(raw: unknown, field: string): Cidr {
  if (typeof raw !== 'string' || raw.trim() === '') throw invalid(field, `${field} is required`);
  if (raw.length > 64) throw invalid(field, `${field} must be at most 64 characters`);
  const parsed = parseNetwork(raw);
  if (typeof parsed === 'string') throw invalid(field, `${field} "${raw.trim()}" ${parsed}`);
  return parsed;
}

function readName(raw: unknown, field: string): string {
  const name = typeof raw === 'string' ? raw.trim() : '';
  if (!name) throw invalid(field, `${field} is required`);
  const problem = nameProblem(name, OWN_NETWORK_LIMITS.name);
  if (problem) throw invalid(field, `${field} ${problem}`);
  return name;
}

function readKind(raw: unknown, field: string): OwnNetworkKind {
  const kind = typeof raw === 'string' ? raw.trim().toLowerCase() : raw;
  if (!OWN_NETWORK_KINDS.includes(kind as OwnNetworkKind)) throw invalid(field, `${field} must be one of ${OWN_NETWORK_KINDS.join(', ')}`);
  return kind as OwnNetworkKind;
}

/** By address, the wider network before those it holds: how an operator reads a plan of addresses. */
function byAddress(networks: OwnNetwork[]): OwnNetwork[] {
  const key = new Map(networks.map((n) => [n, parseNetwork(n.cidr) as Cidr]));
  return [...networks].sort((a, b) => {
    if (a.customerId !== b.customerId) return a.customerId < b.customerId ? -1 : 1;
    const x = key.get(a)!;
    const y = key.get(b)!;
    return x.lo !== y.lo ? (x.lo < y.lo ? -1 : 1) : x.bits - y.bits;
  });
}
