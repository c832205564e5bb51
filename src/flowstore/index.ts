/** The flow store's public surface: what the rest of the server imports. */
export * from './errors.js';
export type { FlowEngine, QueryOptions, InsertOptions } from './engine.js';
export { DEFAULT_QUERY_TIMEOUT_MS } from './engine.js';
export { ChdbEngine } from './chdb-engine.js';
export { ChdbThreadEngine } from './chdb-thread.js';
export { HttpEngine, type HttpEngineConfig } from './http-engine.js';
export {
  migrateFlowStore,
  pendingMigrations as pendingFlowStoreMigrations,
  currentRetentionDays,
  type MigrateOptions,
  type MigrationReport,
} from './schema.js';
export { DEFAULT_RETENTION_DAYS, FLOWS_TABLE } from './ddl.js';
export { insertFlowBatch, ingestFlowBatch, type FlowBatch, type IngestOutcome } from './ingest.js';
export {
  searchRecords,
  searchRecordPages,
  aggregateTerms,
  type SearchRequest,
  type SearchResponse,
  type InstancePage,
  type TimeseriesRequest,
  type TimeseriesResult,
  type TimeseriesBucket,
  type TermsRequest,
  type TermsResponse,
  type InstanceTerms,
  type TermsBucket,
  type RunOptions,
} from './search.js';
export { DEFAULT_SIZE, MAX_SIZE } from './search-request.js';
export { COMMON_REQUEST_SCHEMAS, RECORDS_REQUEST_SCHEMAS, TERMS_REQUEST_SCHEMAS, type RequestSchema } from './request-schema.js';
export { COLUMNS, FIELD_ALIASES, HIDDEN_COLUMNS, columnForPath, filterableFields, sortableFields, type ColumnDef, type ValueKind } from './columns.js';
export { parsePql, printPql, readSentence } from './pql/index.js';
export { resolveDateTimeFilter, parseIsoDate, type DateTimeFilter } from './time.js';
export { advanceFlowsRemoval, latestFlowsRemoval, startFlowsRemoval, tenantFlowCount, type FlowsRemovalProgress } from './tenant-data.js';
export { ParamBag, named, type Params } from './sql.js';
export { parseIp, formatIpv6 } from './ip.js';
export {
  EGRESS_SQL,
  EGRESS_EXPR,
  SRC_INTERNAL_EXPR,
  DST_EXTERNAL_EXPR,
  SRC_INTERNAL_SQL,
  DST_EXTERNAL_SQL,
  COLLECTOR_ORG_SQL,
  datasetOrgSql,
} from './egress.js';
export { DATASET_IP_SQL, EGRESS_ROLLUPS, INTER_ARRIVAL_FIELDS, egressRows, type EgressWindow, type Rollup } from './egress-rollups.js';
export {
  PLAIN_FLOWS,
  ownFlowView,
  ownJoinSql,
  ownKindSql,
  ownNameSql,
  ownSegments,
  reclassifies,
  type FlowView,
  type OwnNetworkRange,
  type OwnSegment,
} from './own-networks.js';
export {
  IpOrgDataset,
  locatePackage as locateIpOrgPackage,
  IP_ORG_DICTIONARY,
  IP_ORG_PACKAGE,
  IP_ORG_ATTRIBUTION,
  type IpOrgStatus,
  type IpOrgState,
  type IpOrgOptions,
  type DictionarySource,
} from './iporg/dataset.js';
