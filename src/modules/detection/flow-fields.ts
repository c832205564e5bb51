import {
  COLLECTOR_ORG_SQL,
  COLUMNS,
  HIDDEN_COLUMNS,
  DST_EXTERNAL_SQL,
  EGRESS_SQL,
  FLOWS_TABLE,
  type OwnSegment,
  ParamBag,
  type Params,
  SRC_INTERNAL_SQL,
  columnForPath,
  ownJoinSql,
  ownKindSql,
  ownNameSql,
} from '../../flowstore/index.js';

/**
 * Record fields the detectors read that are not all registry columns: fields the registry has
 * promoted are read from their column (whose DEFAULT reads `extras` for rows stored before the
 * promotion); the others from the `extras` JSON, where ingest keeps keys the registry does not
 * know. The JSON path is ours, never user input.
 */
const EXTRA_PATHS = {
  'src.process.name': ['src', 'process', 'name'],
  'dst.process.name': ['dst', 'process', 'name'],
  'tls.version': ['tls', 'version'],
  'tls.sni': ['tls', 'sni'],
  'dns.rrname': ['dns', 'rrname'],
  'dns.rrtype': ['dns', 'rrtype'],
  'suricata.alert.signature': ['suricata', 'alert', 'signature'],
} as const;

export type ExtraField = keyof typeof EXTRA_PATHS;

/** A Nullable(String) SQL expression for `path`: the registry column, falling back to `extras`. */
export function textField(path: ExtraField): string {
  const json = `nullIf(JSONExtractString(\`extras\`, ${EXTRA_PATHS[path].map((k) => `'${k}'`).join(', ')}), '')`;
  const column = columnForPath(path);
  return column ? `nullIf(\`${column.column}\`, '')` : json;
}

/** Whether a traffic-link PQL sentence may filter on `path` (it needs a filterable registry column). */
export const filterable = (path: string): boolean => columnForPath(path)?.filterable ?? false;

/**
 * What the detectors' statements read for one tenant: the flows (`from`), which sides are internal,
 * egress, and the external organization of a destination, with the parameters these need.
 */
export interface FlowView {
  from: string;
  params: Params;
  /** The source is an internal host. */
  srcInternal: string;
  /** The destination is an internal host (not external, and an address). */
  dstInternal: string;
  /** Internal source to external destination (flowstore/egress.ts). */
  egress: string;
  /** The external organization of a flow's destination: the service, else the AS holder, else the tenant's own network, else the address. */
  dstOrg: string;
}

/** A tenant without own networks: the flows table and its materialized classification. */
const PLAIN: FlowView = {
  from: FLOWS_TABLE,
  params: {},
  srcInternal: `(${SRC_INTERNAL_SQL}) = 1`,
  dstInternal: `((${DST_EXTERNAL_SQL}) = 0 AND \`dst_ip_addr\` IS NOT NULL)`,
  egress: EGRESS_SQL,
  dstOrg: `coalesce(${COLLECTOR_ORG_SQL}, \`dst_ip\`)`,
};

/** `SELECT *` leaves MATERIALIZED columns out; the statements read some of them. */
const MATERIALIZED = [...COLUMNS.filter((c) => c.materialized), ...HIDDEN_COLUMNS].map((c) => `\`${c.column}\``);

/**
 * The flows of a tenant with own networks (docs/networks.md): each row joined with the network
 * holding its source and the one holding its destination. A network's kind decides whether its
 * side is internal, over the collector's address_type and the address ranges; the external
 * network's name is the organization when the collector named none. `scope` (the tenant and time
 * condition) is applied before the joins.
 */
export function flowView(own: readonly OwnSegment[], scope: string): FlowView {
  if (!own.length) return PLAIN;
  const p = new ParamBag();
  const from =
    `(SELECT f.*, ${ownKindSql('own_src', 'f.src_ip_addr')} AS src_own_kind, ` +
    `${ownKindSql('own_dst', 'f.dst_ip_addr')} AS dst_own_kind, ${ownNameSql('own_dst', 'f.dst_ip_addr')} AS dst_own_org ` +
    `FROM (SELECT *, ${MATERIALIZED.join(', ')} FROM ${FLOWS_TABLE} WHERE ${scope}) AS f` +
    `${ownJoinSql(own, p, 'own_src', 'f.customer_id', 'f.src_ip_addr')}${ownJoinSql(own, p, 'own_dst', 'f.customer_id', 'f.dst_ip_addr')})`;
  const srcInternal = `multiIf(src_own_kind = 1, 1, src_own_kind = 2, 0, ${SRC_INTERNAL_SQL}) = 1`;
  const dstExternal = `multiIf(dst_own_kind = 1, 0, dst_own_kind = 2, 1, ${DST_EXTERNAL_SQL}) = 1`;
  return {
    from,
    params: p.values,
    srcInternal,
    dstInternal: `(NOT ${dstExternal} AND \`dst_ip_addr\` IS NOT NULL)`,
    // Rows no own network touches keep the classification materialized at insert.
    egress: `if(src_own_kind = 0 AND dst_own_kind = 0, ${EGRESS_SQL}, ${srcInternal} AND ${dstExternal})`,
    dstOrg: `coalesce(${COLLECTOR_ORG_SQL}, dst_own_org, \`dst_ip\`)`,
  };
}
