/**
 * A tenant's own networks (docs/networks.md) inside ClickHouse statements: address ranges the
 * operator named, consulted before the public IP → organization dataset.
 *
 * The ranges travel with each statement as typed array parameters (they live in PostgreSQL, so
 * every server process sees a change on its next query) and are joined with `ASOF LEFT JOIN`:
 * per tenant, the segment with the greatest start at or below the address, then a check that the
 * address is not past its end. That is a hash lookup and a binary search per row. A `multiIf` of
 * ranges (or `arrayFirstIndex` over them) tests every range on every row instead: measured on
 * chDB, 1M addresses against 100 ranges took 4.5 s with `multiIf` and 0.8 s joined; against 1,000
 * ranges, 33 s and 0.55 s.
 *
 * A binary search needs segments that do not overlap, while networks nest (most specific wins):
 * `ownSegments` cuts them into disjoint segments, each carrying its most specific network.
 */
import { COLUMNS, HIDDEN_COLUMNS } from './columns.js';
import { FLOWS_TABLE } from './ddl.js';
import { COLLECTOR_ORG_SQL, DST_EXTERNAL_SQL, EGRESS_SQL, INTERNAL_RANGES, SRC_INTERNAL_SQL } from './egress.js';
import { formatIpv6, parseIp } from './ip.js';
import type { ParamBag } from './sql.js';

export interface OwnNetworkRange {
  customerId: string;
  /** First and last address, as ClickHouse's IPv6 sees them (IPv4 mapped). */
  lo: bigint;
  hi: bigint;
  name: string;
  /** An internal site (its addresses count as internal), else an external organization. */
  internal: boolean;
}

export type OwnSegment = OwnNetworkRange;

/**
 * Disjoint segments covering exactly the networks' addresses, each naming the most specific
 * network that holds it; sorted by tenant, then address. Networks of a tenant must nest or be
 * disjoint (CIDRs always are) and be distinct.
 */
export function ownSegments(networks: readonly OwnNetworkRange[]): OwnSegment[] {
  const byTenant = new Map<string, OwnNetworkRange[]>();
  for (const n of networks) byTenant.set(n.customerId, [...(byTenant.get(n.customerId) ?? []), n]);
  const segments: OwnSegment[] = [];
  for (const [, list] of [...byTenant].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    // Outer networks before the ones they hold: by start, then the wider first.
    const sorted = [...list].sort((a, b) => (a.lo !== b.lo ? (a.lo < b.lo ? -1 : 1) : a.hi > b.hi ? -1 : a.hi < b.hi ? 1 : 0));
    const open: OwnNetworkRange[] = [];
    let cursor = 0n;
    const emit = (end: bigint, n: OwnNetworkRange) => {
      if (cursor <= end) segments.push({ ...n, lo: cursor, hi: end });
      cursor = end + 1n;
    };
    for (const n of sorted) {
      while (open.length && open[open.length - 1]!.hi < n.lo) {
        const done = open.pop()!;
        emit(done.hi, done);
      }
      if (open.length && cursor < n.lo) emit(n.lo - 1n, open[open.length - 1]!);
      cursor = n.lo;
      open.push(n);
    }
    while (open.length) {
      const done = open.pop()!;
      emit(done.hi, done);
    }
  }
  return segments;
}

/**
 * ` ASOF LEFT JOIN (segments) AS <alias> ON …`: appended to a FROM whose rows have the tenant in
 * `tenantExpr` and a Nullable(IPv6) address in `ipExpr`. The joined columns are `<alias>_name`,
 * `<alias>_internal` and `<alias>_hi`; read them through `ownNameSql`/`ownKindSql`.
 */
export function ownJoinSql(segments: readonly OwnSegment[], p: ParamBag, alias: string, tenantExpr: string, ipExpr: string): string {
  const arrays = [
    p.add(
      segments.map((s) => s.customerId),
      'Array(String)',
    ),
    p.add(
      segments.map((s) => formatIpv6(s.lo)),
      'Array(IPv6)',
    ),
    p.add(
      segments.map((s) => formatIpv6(s.hi)),
      'Array(IPv6)',
    ),
    p.add(
      segments.map((s) => s.name),
      'Array(String)',
    ),
    p.add(
      segments.map((s) => (s.internal ? 1 : 0)),
      'Array(UInt8)',
    ),
  ];
  const table =
    `(SELECT r.1 AS ${alias}_tenant, toUInt128(r.2) AS ${alias}_lo, toUInt128(r.3) AS ${alias}_hi, r.4 AS ${alias}_name, r.5 AS ${alias}_internal ` +
    `FROM (SELECT arrayJoin(arrayZip(${arrays.join(', ')})) AS r))`;
  return ` ASOF LEFT JOIN ${table} AS ${alias} ON ${tenantExpr} = ${alias}.${alias}_tenant AND ${addressKey(ipExpr)} >= ${alias}.${alias}_lo`;
}

/** The address as the join compares it; a NULL address joins nothing that `matched` accepts. */
const addressKey = (ipExpr: string) => `toUInt128(ifNull(${ipExpr}, toIPv6('::')))`;
const matched = (alias: string, ipExpr: string) => `(${ipExpr} IS NOT NULL AND ${alias}_name != '' AND ${addressKey(ipExpr)} <= ${alias}_hi)`;

/** The name of the own network holding the address, or NULL. */
export const ownNameSql = (alias: string, ipExpr: string) => `if(${matched(alias, ipExpr)}, ${alias}_name, NULL)`;

/** 1 when an internal own network holds the address, 2 when an external one does, 0 when none. */
export const ownKindSql = (alias: string, ipExpr: string) => `multiIf(NOT ${matched(alias, ipExpr)}, 0, ${alias}_internal = 1, 1, 2)`;

/**
 * Flows as a statement about one side of them reads them: `from`, which sides are internal,
 * egress, and the external organization of a destination.
 */
export interface FlowView {
  from: string;
  /** The source is an internal host. */
  srcInternal: string;
  /** The destination is an internal host (not external, and an address). */
  dstInternal: string;
  /** Internal source to external destination (egress.ts). */
  egress: string;
  /** The external organization of a destination: the service, else the AS holder, else an own network, else the address. */
  dstOrg: string;
}

/** Without own networks: the flows table and its classification materialized at insert. */
export const PLAIN_FLOWS: FlowView = {
  from: FLOWS_TABLE,
  srcInternal: `(${SRC_INTERNAL_SQL}) = 1`,
  dstInternal: `((${DST_EXTERNAL_SQL}) = 0 AND \`dst_ip_addr\` IS NOT NULL)`,
  egress: EGRESS_SQL,
  dstOrg: `coalesce(${COLLECTOR_ORG_SQL}, \`dst_ip\`)`,
};

/** `SELECT *` leaves MATERIALIZED columns out; statements read some of them. */
const MATERIALIZED = [...COLUMNS.filter((c) => c.materialized), ...HIDDEN_COLUMNS].map((c) => `\`${c.column}\``);

/**
 * The flows matching `scope` (a condition on the flows table: tenant first, then time) joined with
 * the networks holding their source and their destination. A network's kind decides whether its
 * side is internal, over the collector's address_type and the address ranges; an external
 * network's name is the organization when the collector named none. Rows no network touches keep
 * the classification materialized at insert.
 */
export function ownFlowView(own: readonly OwnSegment[], scope: string, p: ParamBag): FlowView {
  if (!own.length) return PLAIN_FLOWS;
  const from =
    `(SELECT f.*, ${ownKindSql('own_src', 'f.src_ip_addr')} AS src_own_kind, ` +
    `${ownKindSql('own_dst', 'f.dst_ip_addr')} AS dst_own_kind, ${ownNameSql('own_dst', 'f.dst_ip_addr')} AS dst_own_org ` +
    `FROM (SELECT *, ${MATERIALIZED.join(', ')} FROM ${FLOWS_TABLE} WHERE ${scope}) AS f` +
    `${ownJoinSql(own, p, 'own_src', 'f.customer_id', 'f.src_ip_addr')}${ownJoinSql(own, p, 'own_dst', 'f.customer_id', 'f.dst_ip_addr')})`;
  const srcInternal = `multiIf(src_own_kind = 1, 1, src_own_kind = 2, 0, ${SRC_INTERNAL_SQL}) = 1`;
  const dstExternal = `multiIf(dst_own_kind = 1, 0, dst_own_kind = 2, 1, ${DST_EXTERNAL_SQL}) = 1`;
  return {
    from,
    srcInternal,
    dstInternal: `(NOT ${dstExternal} AND \`dst_ip_addr\` IS NOT NULL)`,
    egress: `if(src_own_kind = 0 AND dst_own_kind = 0, ${EGRESS_SQL}, ${srcInternal} AND ${dstExternal})`,
    dstOrg: `coalesce(${COLLECTOR_ORG_SQL}, dst_own_org, \`dst_ip\`)`,
  };
}

/** Most segments a statement tests inline (each one a comparison per row); beyond, it joins. */
export const MAX_INLINE_SEGMENTS = 32;

/**
 * Egress as a row condition for flows of tenants with networks that reclassify (explore's rows
 * path), or undefined when there are too many such segments to test inline (then `ownFlowView`).
 * Only the segments that reclassify can make a row's egress differ from `is_egress`, and there
 * are usually one to three (a lab's "internet", a DMZ), so they are tested with a `multiIf` of
 * ranges instead of the two joins: on 2M rows the explore views took 0.36–2.3 s, against 0.44–3.9 s
 * joined (docs/networks.md). Segments that agree with the address ranges are left out, so where the
 * collector's address_type contradicts one of those, explore follows the collector
 * (docs/networks.md).
 */
export function inlineEgressSql(segments: readonly OwnSegment[], p: ParamBag): string | undefined {
  const moving = segments.filter(reclassifies);
  if (moving.length > MAX_INLINE_SEGMENTS) return undefined;
  const kind = (col: string) => {
    if (!moving.length) return '0';
    const arms = moving.map((s) => {
      const within = `${col} BETWEEN toIPv6(${p.add(formatIpv6(s.lo), 'String')}) AND toIPv6(${p.add(formatIpv6(s.hi), 'String')})`;
      return `\`customer_id\` = ${p.add(s.customerId, 'String')} AND ${within}, ${s.internal ? 1 : 2}`;
    });
    return `multiIf(${arms.join(', ')}, 0)`;
  };
  const src = kind('`src_ip_addr`');
  const dst = kind('`dst_ip_addr`');
  const srcInternal = `multiIf(${src} = 1, 1, ${src} = 2, 0, ${SRC_INTERNAL_SQL}) = 1`;
  const dstExternal = `multiIf(${dst} = 1, 0, ${dst} = 2, 1, ${DST_EXTERNAL_SQL}) = 1`;
  return `if(${src} = 0 AND ${dst} = 0, ${EGRESS_SQL}, ${srcInternal} AND ${dstExternal})`;
}

const INTERNAL = INTERNAL_RANGES.map(([a, b]) => ({ lo: parseIp(a)!, hi: parseIp(b)! }));

/**
 * Whether a network can turn flows that were not egress at insert into egress ones: an internal
 * network outside the private ranges (public sources of the tenant's), or an external one over
 * them (private addresses of a partner or a lab's "internet"). Explore reads such tenants' other
 * flows too (egress-rollups.ts), which costs a read of rows; networks that only name public
 * addresses cost nothing of the kind.
 */
export function reclassifies(n: OwnNetworkRange): boolean {
  if (n.internal) return !INTERNAL.some((r) => n.lo >= r.lo && n.hi <= r.hi);
  return INTERNAL.some((r) => n.lo <= r.hi && n.hi >= r.lo);
}
