/**
 * Egress flows and the organization they reach, as SQL over the flows table: shared by explore
 * and anything else that attributes traffic to external organizations.
 *
 * - A flow is **egress** when its source is internal and its destination external. A side is
 *   internal when the collector says `address_type: private`, external when it says `public`;
 *   without that, by address: RFC 1918, CGNAT (100.64/10), loopback, link-local and IPv6 ULA
 *   are internal; multicast, broadcast, 0/8 and unspecified destinations are neither.
 * - Its **organization** is, in order: `dst.ctx.organization` (the service, e.g. Slack), then
 *   `dst.geo.org` (the AS holder, e.g. Amazon), both as the collector supplied them (stored at
 *   insert in the hidden column `collector_org`); else the `ip_org` dictionary's organization for
 *   `dst.ip` (iporg/dataset.ts), once it is loaded, looked up when a query runs.
 *   Empty strings count as missing. A flow none of these names has no organization.
 */
import { IP_ORG_DICTIONARY } from './iporg/dataset.js';

const v4 = (a: string, b: string) => [`::ffff:${a}`, `::ffff:${b}`] as const;

/** Address ranges of internal hosts (as IPv6, IPv4 mapped). */
export const INTERNAL_RANGES = [
  v4('10.0.0.0', '10.255.255.255'),
  v4('172.16.0.0', '172.31.255.255'),
  v4('192.168.0.0', '192.168.255.255'),
  v4('100.64.0.0', '100.127.255.255'),
  v4('127.0.0.0', '127.255.255.255'),
  v4('169.254.0.0', '169.254.255.255'),
  ['fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['::1', '::1'],
] as const;

/** Destinations that are no organization's: multicast, broadcast, "this network", unspecified. */
const NOWHERE_RANGES = [
  v4('224.0.0.0', '255.255.255.255'),
  v4('0.0.0.0', '0.255.255.255'),
  ['ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['::', '::'],
] as const;

const inRanges = (col: string, ranges: readonly (readonly [string, string])[]) =>
  '(' + ranges.map(([a, b]) => (a === b ? `${col} = toIPv6('${a}')` : `${col} BETWEEN toIPv6('${a}') AND toIPv6('${b}')`)).join(' OR ') + ')';

/** 1 when the source is internal (address_type first, else the address). */
export const SRC_INTERNAL_EXPR = `multiIf(\`src_address_type\` = 'private', 1, \`src_address_type\` = 'public', 0, \`src_ip_addr\` IS NULL, 0, ${inRanges('`src_ip_addr`', INTERNAL_RANGES)})`;

/** 1 when the destination is an external host. */
export const DST_EXTERNAL_EXPR = `multiIf(\`dst_address_type\` = 'public', 1, \`dst_address_type\` = 'private', 0, \`dst_ip_addr\` IS NULL, 0, NOT ${inRanges('`dst_ip_addr`', INTERNAL_RANGES)} AND NOT ${inRanges('`dst_ip_addr`', NOWHERE_RANGES)})`;

/**
 * The classification as an expression of the row, materialized at insert into the hidden column
 * `is_egress` (columns.ts): a query reads one byte per row instead of two address types, two
 * IPv6 addresses and a dozen range tests. Parts written before the column existed compute it on
 * read, with the same result.
 */
export const EGRESS_EXPR = `toUInt8(${SRC_INTERNAL_EXPR} AND ${DST_EXTERNAL_EXPR})`;

export const EGRESS_SQL = '`is_egress` = 1';

/** The two sides' tests as row expressions (what detection's SQL uses directly). */
export const SRC_INTERNAL_SQL = SRC_INTERNAL_EXPR;
export const DST_EXTERNAL_SQL = DST_EXTERNAL_EXPR;

/**
 * The organization the collector supplied (service first, then AS holder), or NULL: materialized
 * at insert into the hidden column `collector_org` (columns.ts), which explore reads instead.
 */
export const COLLECTOR_ORG_SQL = "coalesce(nullIf(`dst_ctx_organization`, ''), nullIf(`dst_geo_org`, ''))";

/** The dataset's organization for an IPv6 expression, or NULL (also for a NULL address). */
export function datasetOrgSql(ipExpr: string): string {
  return `if(${ipExpr} IS NULL, NULL, nullIf(dictGetOrDefault('${IP_ORG_DICTIONARY}', 'org', assumeNotNull(${ipExpr}), ''), ''))`;
}

/** Bytes internal → organization (upload) and back (download) of one flow: collector moments, else metric fields. */
export const UPLOAD_SQL = 'ifNull(`stats_volume_bytes_src_sum`, ifNull(`metric_src_bytes`, 0))';
export const DOWNLOAD_SQL = 'ifNull(`stats_volume_bytes_dst_sum`, ifNull(`metric_dst_bytes`, 0))';
