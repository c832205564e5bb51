/**
 * Explore ▸ Egress organizations (wire.md §9): the rules. Requests are validated here (every
 * failure a 400 naming the field), the caller must hold the search scope and may only name
 * instances of its own tree (403 otherwise, like search), and each view is computed in ClickHouse
 * (explore.store.ts) over egress flows of the named instances, merged.
 */
import type { Session } from '../../auth/session.js';
import { DomainError, authorizationError } from '../../errors.js';
import {
  FlowQueryError,
  type FlowEngine,
  formatIpv6,
  type IpOrgDataset,
  type OwnNetworkRange,
  ownSegments,
  parseIp,
  reclassifies,
  resolveDateTimeFilter,
} from '../../flowstore/index.js';
import { cadenceOf, type Cadence } from './cadence.js';
import * as store from './explore.store.js';

export const DEFAULT_ORGANIZATIONS_SIZE = 25;
export const DEFAULT_REACH_SIZE = 50;
export const MAX_SIZE = 1_000;
export const MAX_INSTANCES = 100;
/** Explore looks at patterns (week rhythm, cadence): the default window is the 7 days before `end`. */
export const DEFAULT_WINDOW_MS = 7 * 86_400_000;
/** The header lists at most this many processes; access lists at most this many terms each. */
export const HEADER_PROCESSES = 20;
export const ACCESS_TERMS = 20;

/** One explore request as GraphQL (and, through it, REST) hands it over; validated here. */
export interface ExploreInput {
  instanceIds?: readonly string[] | null;
  start?: unknown;
  end?: unknown;
  size?: number | null;
  srcIp?: string | null;
}

export interface Envelope {
  status: 'success';
  results_for: string[];
  timestamp: string;
  readout: string;
}

export const validationError = (field: string, message: string) => new DomainError(400, 'validation_error', message, { body: { field }, details: { field } });

/** `2026-07-06T21:14:09.482000+00:00`, the SDK's timestamp format (wire.md 9.2). */
export const envelopeTimestamp = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');

const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const HOURS = Array.from({ length: 24 }, (_, h) => String(h).padStart(2, '0'));

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${u === 0 ? v : v >= 100 ? Math.round(v) : Math.round(v * 10) / 10} ${units[u]}`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const pct = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 100) : 0);

interface Resolved {
  scope: store.ExploreScope;
  envelope: (readout: string) => Envelope;
}

export class ExploreService {
  constructor(
    private readonly engine: FlowEngine,
    readonly dataset: IpOrgDataset,
    /** The own networks of already authorized tenants (networks.service.ts), read per request so a change shows at once. */
    private readonly ownNetworks: (customerIds: readonly string[]) => Promise<OwnNetworkRange[]>,
    private readonly now: () => number = Date.now,
  ) {}

  async organizations(session: Session, input: ExploreInput) {
    const { scope, envelope } = await this.resolve(session, input);
    const size = readSize(input.size, DEFAULT_ORGANIZATIONS_SIZE);
    const rows = await store.listOrganizations(this.engine, scope, size);
    const organizations = rows
      .filter((r) => r.name !== null)
      .map((r) => ({ name: r.name, bytes: r.upload + r.download, upload: r.upload, download: r.download, flows: r.flows, sources: r.sources }));
    const totalOrgs = rows[0]?.total_orgs ?? 0;
    const totalFlows = rows[0]?.total_flows ?? 0;
    const classified = organizations.reduce((s, o) => s + o.flows, 0);
    const bytes = organizations.reduce((s, o) => s + o.bytes, 0);
    let readout =
      totalFlows === 0
        ? 'no egress flows in the window'
        : `${plural(totalOrgs, 'organization')} in ${plural(totalFlows, 'egress flow')}` +
          (organizations[0] ? `; top ${organizations[0].name} (${pct(organizations[0].bytes, bytes)}% of bytes in page)` : '') +
          (classified < totalFlows ? `; ${pct(classified, totalFlows)}% of flows classified in page` : '');
    readout += this.datasetNote();
    return { ...envelope(readout), organizations, total_orgs: totalOrgs, coverage: { classified_in_page: classified, total_flows: totalFlows } };
  }

  async header(session: Session, org: unknown, input: ExploreInput) {
    const name = readOrg(org);
    const { scope: all, envelope } = await this.resolve(session, input);
    const scope = await this.ofOrg(all, name);
    const [{ total, processes }, d] = await Promise.all([
      store.orgActivity(this.engine, scope, name, HEADER_PROCESSES),
      store.orgDestinations(this.engine, scope, name),
    ]);
    const readout =
      total.flows === 0
        ? `no egress flows to ${name} in the window`
        : `${name}: ${formatBytes(total.upload)} up, ${formatBytes(total.download)} down, ${plural(total.sources, 'source')}, ${plural(d.endpoints, 'endpoint')}` +
          (processes[0] ? `, mostly ${processes[0].name}` : '');
    return {
      ...envelope(readout + this.datasetNote()),
      org: name,
      industry: d.industry,
      geo: d.geo,
      upload: total.upload,
      download: total.download,
      sources: total.sources,
      endpoints: d.endpoints,
      processes: processes.map((p) => p.name),
    };
  }

  async temporal(session: Session, org: unknown, input: ExploreInput) {
    const name = readOrg(org);
    const { scope: all, envelope } = await this.resolve(session, input);
    const scope = await this.ofOrg(all, name);
    const rows = await store.orgTemporal(this.engine, scope, name);
    const value = new Map(rows.map((r) => [`${r.day}:${r.hour}`, r.flows]));
    const cells = DAYS.flatMap((row, d) => HOURS.map((col, h) => ({ row, col, value: value.get(`${d + 1}:${h}`) ?? 0 })));
    const total = rows.reduce((s, r) => s + r.flows, 0);
    let readout = `no egress flows to ${name} in the window`;
    if (total > 0) {
      const busiest = cells.reduce((a, b) => (b.value > a.value ? b : a));
      const working = rows.filter((r) => r.day <= 5 && r.hour >= 8 && r.hour < 18).reduce((s, r) => s + r.flows, 0);
      readout = `busiest ${busiest.row} ${busiest.col}:00 UTC (${busiest.value} of ${total} flows); ${pct(working, total)}% on weekdays 08–18 UTC`;
    }
    return { ...envelope(readout), cells, rows: DAYS, cols: HOURS, total };
  }

  async cadence(session: Session, org: unknown, input: ExploreInput): Promise<Envelope & Omit<Cadence, 'readout'>> {
    const name = readOrg(org);
    const { scope: all, envelope } = await this.resolve(session, input);
    const scope = await this.ofOrg(all, name);
    const { gaps, flows } = await store.orgCadence(this.engine, scope, name);
    const { readout, ...cadence } = cadenceOf(gaps, flows);
    return { ...envelope(readout), ...cadence };
  }

  async transfer(session: Session, org: unknown, input: ExploreInput) {
    const name = readOrg(org);
    const { scope: all, envelope } = await this.resolve(session, input);
    const scope = await this.ofOrg(all, name);
    const t = await store.orgTransfer(this.engine, scope, name);
    const r3 = (x: number | null) => (x === null ? null : Math.round(x * 1000) / 1000);
    const transfer = {
      chunk_bytes_mean: r3(t.chunk_bytes_mean),
      chunk_cv: r3(t.chunk_cv),
      entropy_mean: r3(t.entropy_mean),
      duration_mean: r3(t.duration_mean),
      up: t.up,
      down: t.down,
    };
    const readout =
      t.flows === 0
        ? `no egress flows to ${name} in the window`
        : `${formatBytes(t.up)} up, ${formatBytes(t.down)} down in ${plural(t.flows, 'flow')}; ~${formatBytes(Math.round(t.chunk_bytes_mean ?? 0))} per flow` +
          (transfer.chunk_cv !== null ? ` (cv ${transfer.chunk_cv})` : '') +
          (transfer.entropy_mean !== null ? `, payload entropy ${transfer.entropy_mean} bits/byte` : '') +
          (transfer.duration_mean !== null ? `, ~${transfer.duration_mean} s each` : '');
    return { ...envelope(readout), transfer };
  }

  async reach(session: Session, org: unknown, input: ExploreInput) {
    const name = readOrg(org);
    const { scope: all, envelope } = await this.resolve(session, input);
    const scope = await this.ofOrg(all, name);
    const size = readSize(input.size, DEFAULT_REACH_SIZE);
    const { sources, processes, source_count: sourceCount } = await store.orgActivity(this.engine, scope, name, size);
    const bytes = sources.reduce((s, r) => s + r.upload + r.download, 0);
    const readout =
      sourceCount === 0
        ? `no internal source reaches ${name} in the window`
        : `${plural(sourceCount, 'source')}; top ${sources[0]!.ip} (${pct(sources[0]!.upload + sources[0]!.download, bytes)}% of bytes)` +
          (processes.length
            ? `; processes: ${processes
                .slice(0, 3)
                .map((p) => p.name)
                .join(', ')}`
            : '');
    return {
      ...envelope(readout),
      sources,
      processes,
      source_count: sourceCount,
    };
  }

  async access(session: Session, org: unknown, input: ExploreInput) {
    const name = readOrg(org);
    const { scope: all, envelope } = await this.resolve(session, input);
    const scope = await this.ofOrg(all, name);
    const rows = await store.orgAccess(this.engine, scope, name, ACCESS_TERMS);
    const facet = (f: store.AccessFacet) => rows.filter((r) => r.facet === f).map(({ name: n, flows, bytes }) => ({ name: n, flows, bytes }));
    const lists = { tls_versions: facet('tls_versions'), ports: facet('ports'), protocols: facet('protocols'), apps: facet('apps') };
    const total = lists.protocols.reduce((s, r) => s + r.flows, 0) || lists.ports.reduce((s, r) => s + r.flows, 0);
    const top = (l: { name: unknown; flows: number }[]) => (l[0] ? `${String(l[0].name)}` : undefined);
    const parts = [
      top(lists.tls_versions),
      lists.ports[0] ? `port ${lists.ports[0].name}${lists.protocols[0] ? `/${lists.protocols[0].name}` : ''}` : undefined,
      top(lists.apps),
    ].filter(Boolean);
    const readout =
      total === 0
        ? `no egress flows to ${name} in the window`
        : `mostly ${parts.join(', ')} (${pct(lists.ports[0]?.flows ?? 0, total)}% of flows on the top port)`;
    return { ...envelope(readout), ...lists };
  }

  /** The scope of one organization's views, with the addresses own networks or the dataset attribute to it. */
  private async ofOrg(scope: store.ExploreScope, org: string): Promise<store.ExploreScope> {
    return { ...scope, orgAddresses: await store.orgAddresses(this.engine, scope, org) };
  }

  /** The dataset's state when it is not serving: flows without a collector-supplied org stay unattributed. */
  private datasetNote(): string {
    const { state } = this.dataset.status();
    return state === 'ready'
      ? ''
      : `; IP-organization dataset ${state === 'loading' || state === 'idle' ? 'loading' : state}, only collector-named organizations`;
  }

  /**
   * The scope first, then the request (400s), then the instances (403). `size` is read by the
   * views that have one; `src_ip` narrows every view, the list included.
   */
  private async resolve(session: Session, input: ExploreInput): Promise<Resolved> {
    session.assert('explore.read');
    const customerIds = readInstanceIds(input.instanceIds);
    const nowMs = this.now();
    const endMs = readDate(input.end, 'end', nowMs) ?? nowMs;
    const startMs = readDate(input.start, 'start', nowMs) ?? endMs - DEFAULT_WINDOW_MS;
    if (startMs > endMs) throw validationError('start', 'start must not be after end');
    let srcIp: string | undefined;
    if (input.srcIp !== undefined && input.srcIp !== null) {
      const n = typeof input.srcIp === 'string' ? parseIp(input.srcIp.trim()) : null;
      if (n === null) throw validationError('src_ip', 'src_ip must be an IPv4 or IPv6 address');
      srcIp = formatIpv6(n);
    }
    const tenants = await session.tenantScope();
    const unauthorized = customerIds.filter((id) => !tenants.tenantIds.has(id));
    if (unauthorized.length) {
      const e = authorizationError(`Not authorized for ${unauthorized.length} of the requested instances`, {
        reason: 'instance_not_authorized',
        unauthorized_instance_ids: unauthorized,
      });
      throw new DomainError(e.status, e.code, e.message, { details: e.details, body: { unauthorized_instance_ids: unauthorized } });
    }
    void this.dataset.ensure();
    const networks = await this.ownNetworks(customerIds);
    const reclassifying = new Set(networks.filter(reclassifies).map((n) => n.customerId));
    const own = ownSegments(networks);
    const reclassified = own.filter((s) => reclassifying.has(s.customerId));
    return {
      scope: {
        customerIds,
        startMs,
        endMs,
        ...(srcIp !== undefined ? { srcIp } : {}),
        withDataset: this.dataset.ready,
        own,
        ...(reclassified.length ? { reclassified } : {}),
      },
      envelope: (readout) => ({ status: 'success', results_for: customerIds, timestamp: envelopeTimestamp(this.now()), readout }),
    };
  }
}

function readInstanceIds(ids: readonly string[] | null | undefined): string[] {
  if (ids === undefined || ids === null) throw validationError('instance_ids', 'instance_ids is required');
  const kept = [...new Set(ids.map((id) => id.trim()).filter((id) => id !== ''))];
  if (!kept.length) throw validationError('instance_ids', 'instance_ids must name at least one instance');
  if (kept.length > MAX_INSTANCES) throw validationError('instance_ids', `at most ${MAX_INSTANCES} instance_ids`);
  return kept;
}

/** A DateTimeFilter (wire.md 5.2), or an ISO 8601 string as a courtesy (query parameters). */
function readDate(value: unknown, field: 'start' | 'end', nowMs: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  const filter = typeof value === 'string' ? { absolute: { date: value } } : value;
  try {
    return resolveDateTimeFilter(filter, field, nowMs);
  } catch (error) {
    if (error instanceof FlowQueryError) throw validationError(error.field, error.message);
    throw error;
  }
}

function readSize(size: number | null | undefined, fallback: number): number {
  if (size === undefined || size === null) return fallback;
  if (!Number.isInteger(size) || size < 1 || size > MAX_SIZE) throw validationError('size', `size must be an integer between 1 and ${MAX_SIZE}`);
  return size;
}

function readOrg(org: unknown): string {
  if (typeof org !== 'string' || org.trim() === '') throw validationError('org', 'org must be a non-empty organization name');
  if (org.length > 512) throw validationError('org', 'org must be at most 512 characters');
  return org;
}
