import { builder } from '../../graphql/builder.js';
import type { ExploreInput } from './explore.service.js';

/**
 * Explore ▸ Egress organizations (wire.md §9): one query field per view. Byte counters are Float
 * (always whole numbers) because GraphQL's Int stops at 2^31.
 */

const ExploreRequest = builder.inputType('ExploreRequest', {
  description: 'Which instances and window a view covers. `start`/`end` are DateTimeFilters (wire.md 5.2) or ISO 8601 strings.',
  fields: (t) => ({
    instanceIds: t.stringList({
      required: false,
      description: 'Required: the instances (customer ids) to merge; each must be the caller or one of its children. Empty ids are dropped.',
    }),
    start: t.field({ type: 'JSON', required: false, description: 'Default: 7 days before `end`.' }),
    end: t.field({ type: 'JSON', required: false, description: 'Default: now.' }),
    size: t.int({ required: false, description: 'Rows: organizations (default 25) and reach (default 50), 1–1000; ignored elsewhere.' }),
    srcIp: t.string({ required: false, description: 'Narrows to one internal source address.' }),
  }),
});

type Envelope = { status: string; results_for: string[]; timestamp: string; readout: string };

/** status, resultsFor, timestamp, readout (wire.md 9.2). */
function envelope<T extends Envelope>(t: any) {
  return {
    status: t.string({ resolve: (r: T) => r.status }),
    resultsFor: t.stringList({ description: 'The instances covered.', resolve: (r: T) => r.results_for }),
    timestamp: t.string({ description: 'When the answer was computed (`2026-07-06T21:14:09.482000+00:00`).', resolve: (r: T) => r.timestamp }),
    readout: t.string({ description: 'A one-line human summary.', resolve: (r: T) => r.readout }),
  };
}

const OrganizationRow = builder.simpleObject('ExploreOrganizationRow', {
  fields: (t) => ({
    name: t.string({ nullable: true }),
    bytes: t.float(),
    upload: t.float({ description: 'Bytes internal → organization.' }),
    download: t.float({ description: 'Bytes organization → internal.' }),
    flows: t.int(),
    sources: t.int({ description: 'Distinct internal source addresses.' }),
  }),
});

const Coverage = builder.simpleObject('ExploreCoverage', {
  fields: (t) => ({
    classifiedInPage: t.int({ description: 'Egress flows of the organizations in this page.' }),
    totalFlows: t.int({ description: 'Egress flows in the window, attributed to an organization or not.' }),
  }),
});

export const IpOrgDatasetStatus = builder.simpleObject('IpOrgDatasetStatus', {
  description: 'The IP → organization dataset used when a collector supplied no organization (docs/explore.md).',
  fields: (t) => ({
    dataset: t.string(),
    packageVersion: t.string({ nullable: true }),
    loadedVersion: t.string({ nullable: true }),
    state: t.string({ description: '`idle`, `loading`, `ready`, `failed` or `off`.' }),
    prefixes: t.int({ nullable: true }),
    loadedAt: t.string({ nullable: true }),
    loadMs: t.int({ nullable: true }),
    license: t.string(),
    attribution: t.string(),
    error: t.string({ nullable: true }),
  }),
});

const Organizations = builder.objectRef<Envelope & { organizations: any[]; total_orgs: number; coverage: { classified_in_page: number; total_flows: number } }>(
  'ExploreOrganizations',
);
Organizations.implement({
  fields: (t) => ({
    ...envelope(t),
    organizations: t.field({ type: [OrganizationRow], resolve: (r) => r.organizations }),
    totalOrgs: t.int({ resolve: (r) => r.total_orgs }),
    coverage: t.field({
      type: Coverage,
      nullable: true,
      resolve: (r) => ({ classifiedInPage: r.coverage.classified_in_page, totalFlows: r.coverage.total_flows }),
    }),
  }),
});

const Header = builder.objectRef<
  Envelope & {
    org: string;
    industry: string | null;
    geo: string | null;
    upload: number;
    download: number;
    sources: number;
    endpoints: number;
    processes: string[];
  }
>('ExploreOrgHeader');
Header.implement({
  fields: (t) => ({
    ...envelope(t),
    org: t.exposeString('org', { nullable: true }),
    industry: t.exposeString('industry', { nullable: true }),
    geo: t.exposeString('geo', { nullable: true, description: 'The most frequent destination country.' }),
    upload: t.exposeFloat('upload'),
    download: t.exposeFloat('download'),
    sources: t.exposeInt('sources'),
    endpoints: t.exposeInt('endpoints', { description: 'Distinct destination addresses.' }),
    processes: t.exposeStringList('processes', { description: 'Source processes, most flows first.' }),
  }),
});

const Cell = builder.simpleObject('ExploreHeatCell', {
  fields: (t) => ({ row: t.string(), col: t.string(), value: t.float() }),
});

const Temporal = builder.objectRef<Envelope & { cells: { row: string; col: string; value: number }[]; rows: string[]; cols: string[]; total: number }>(
  'ExploreOrgTemporal',
);
Temporal.implement({
  description: 'Flows by UTC weekday (rows `Mon`…`Sun`) and hour (cols `00`…`23`); every cell is present.',
  fields: (t) => ({
    ...envelope(t),
    cells: t.field({ type: [Cell], resolve: (r) => r.cells }),
    rows: t.exposeStringList('rows'),
    cols: t.exposeStringList('cols'),
    total: t.exposeInt('total'),
  }),
});

const CdfPoint = builder.simpleObject('ExploreCdfPoint', {
  fields: (t) => ({ gapSecs: t.float(), fraction: t.float() }),
});

const BeaconSubset = builder.simpleObject('ExploreBeaconSubset', {
  fields: (t) => ({ flows: t.int(), sources: t.int(), intervalMs: t.float({ nullable: true }) }),
});

type CadenceShape = Envelope & {
  cdf: { gap_secs: number; fraction: number }[];
  dominant_intervals: { gap_secs: number; fraction: number }[];
  steppedness: number | null;
  median_gap_secs: number | null;
  stats: Record<string, number>;
  beacon: { flows: number; sources: number; interval_ms: number | null };
};
const points = (l: { gap_secs: number; fraction: number }[]) => l.map((p) => ({ gapSecs: p.gap_secs, fraction: p.fraction }));
const Cadence = builder.objectRef<CadenceShape>('ExploreOrgCadence');
Cadence.implement({
  description: 'Session-gap rhythm (docs/explore.md): the gap CDF, the dominant beats and the beacon-like subset.',
  fields: (t) => ({
    ...envelope(t),
    cdf: t.field({ type: [CdfPoint], resolve: (r) => points(r.cdf) }),
    dominantIntervals: t.field({ type: [CdfPoint], resolve: (r) => points(r.dominant_intervals) }),
    steppedness: t.exposeFloat('steppedness', { nullable: true }),
    medianGapSecs: t.exposeFloat('median_gap_secs', { nullable: true }),
    stats: t.field({ type: 'JSON', description: 'Dotted flow-field path → mean over the flows.', resolve: (r) => r.stats }),
    beacon: t.field({
      type: BeaconSubset,
      nullable: true,
      resolve: (r) => ({ flows: r.beacon.flows, sources: r.beacon.sources, intervalMs: r.beacon.interval_ms }),
    }),
  }),
});

const TransferFacts = builder.simpleObject('ExploreTransferFacts', {
  fields: (t) => ({
    chunkBytesMean: t.float({ nullable: true, description: 'Mean bytes (up + down) per flow.' }),
    chunkCv: t.float({ nullable: true, description: 'Coefficient of variation of bytes per flow.' }),
    entropyMean: t.float({ nullable: true, description: 'Payload entropy per packet, bits/byte.' }),
    durationMean: t.float({ nullable: true, description: 'Seconds per flow.' }),
    up: t.float(),
    down: t.float(),
  }),
});

type TransferShape = Envelope & {
  transfer: { chunk_bytes_mean: number | null; chunk_cv: number | null; entropy_mean: number | null; duration_mean: number | null; up: number; down: number };
};
const Transfer = builder.objectRef<TransferShape>('ExploreOrgTransfer');
Transfer.implement({
  fields: (t) => ({
    ...envelope(t),
    transfer: t.field({
      type: TransferFacts,
      nullable: true,
      resolve: ({ transfer: x }) => ({
        chunkBytesMean: x.chunk_bytes_mean,
        chunkCv: x.chunk_cv,
        entropyMean: x.entropy_mean,
        durationMean: x.duration_mean,
        up: x.up,
        down: x.down,
      }),
    }),
  }),
});

const SourceRow = builder.simpleObject('ExploreSourceRow', {
  fields: (t) => ({ ip: t.string({ nullable: true }), upload: t.float(), download: t.float(), flows: t.int() }),
});
const ProcessRow = builder.simpleObject('ExploreProcessRow', {
  fields: (t) => ({ name: t.string({ nullable: true }), flows: t.int(), sources: t.int() }),
});

const Reach = builder.objectRef<Envelope & { sources: any[]; processes: any[]; source_count: number }>('ExploreOrgReach');
Reach.implement({
  fields: (t) => ({
    ...envelope(t),
    sources: t.field({ type: [SourceRow], description: 'By bytes, at most `size`.', resolve: (r) => r.sources }),
    processes: t.field({ type: [ProcessRow], description: 'Source processes by flows, at most `size`.', resolve: (r) => r.processes }),
    sourceCount: t.int({ resolve: (r) => r.source_count }),
  }),
});

const TermRow = builder.simpleObject('ExploreTermRow', {
  fields: (t) => ({ name: t.field({ type: 'JSON', description: 'A string, or an int for ports.' }), flows: t.int(), bytes: t.float() }),
});

type TermList = { name: unknown; flows: number; bytes: number }[];
const Access = builder.objectRef<Envelope & { tls_versions: TermList; ports: TermList; protocols: TermList; apps: TermList }>('ExploreOrgAccess');
Access.implement({
  description: 'How the organization is reached: top 20 of each, by flows.',
  fields: (t) => ({
    ...envelope(t),
    tlsVersions: t.field({ type: [TermRow], resolve: (r) => r.tls_versions }),
    ports: t.field({ type: [TermRow], resolve: (r) => r.ports }),
    protocols: t.field({ type: [TermRow], resolve: (r) => r.protocols }),
    apps: t.field({ type: [TermRow], resolve: (r) => r.apps }),
  }),
});

const input = (r: { instanceIds?: string[] | null; start?: unknown; end?: unknown; size?: number | null; srcIp?: string | null }): ExploreInput => r;

builder.queryFields((t) => ({
  exploreOrganizations: t.field({
    type: Organizations,
    description: 'External organizations reached by egress flows, ranked by bytes.',
    args: { request: t.arg({ type: ExploreRequest, required: true }) },
    resolve: async (_root, args, ctx) => ctx.services.explore.organizations(await ctx.auth.requireSession(), input(args.request)),
  }),
  exploreOrganization: t.field({
    type: Header,
    description: 'Stable attributes of one organization.',
    args: {
      org: t.arg.string({ required: true, description: 'The organization name as the list gives it.' }),
      request: t.arg({ type: ExploreRequest, required: true }),
    },
    resolve: async (_root, args, ctx) => ctx.services.explore.header(await ctx.auth.requireSession(), args.org, input(args.request)),
  }),
  exploreOrgTemporal: t.field({
    type: Temporal,
    args: {
      org: t.arg.string({ required: true, description: 'The organization name as the list gives it.' }),
      request: t.arg({ type: ExploreRequest, required: true }),
    },
    resolve: async (_root, args, ctx) => ctx.services.explore.temporal(await ctx.auth.requireSession(), args.org, input(args.request)),
  }),
  exploreOrgCadence: t.field({
    type: Cadence,
    args: {
      org: t.arg.string({ required: true, description: 'The organization name as the list gives it.' }),
      request: t.arg({ type: ExploreRequest, required: true }),
    },
    resolve: async (_root, args, ctx) => ctx.services.explore.cadence(await ctx.auth.requireSession(), args.org, input(args.request)),
  }),
  exploreOrgTransfer: t.field({
    type: Transfer,
    args: {
      org: t.arg.string({ required: true, description: 'The organization name as the list gives it.' }),
      request: t.arg({ type: ExploreRequest, required: true }),
    },
    resolve: async (_root, args, ctx) => ctx.services.explore.transfer(await ctx.auth.requireSession(), args.org, input(args.request)),
  }),
  exploreOrgReach: t.field({
    type: Reach,
    args: {
      org: t.arg.string({ required: true, description: 'The organization name as the list gives it.' }),
      request: t.arg({ type: ExploreRequest, required: true }),
    },
    resolve: async (_root, args, ctx) => ctx.services.explore.reach(await ctx.auth.requireSession(), args.org, input(args.request)),
  }),
  exploreOrgAccess: t.field({
    type: Access,
    args: {
      org: t.arg.string({ required: true, description: 'The organization name as the list gives it.' }),
      request: t.arg({ type: ExploreRequest, required: true }),
    },
    resolve: async (_root, args, ctx) => ctx.services.explore.access(await ctx.auth.requireSession(), args.org, input(args.request)),
  }),
  ipOrgDataset: t.field({
    type: IpOrgDatasetStatus,
    description: 'Where the IP → organization dataset is (loading, ready...). Needs the search scope.',
    resolve: async (_root, _args, ctx) => {
      (await ctx.auth.requireSession()).assert('explore.read');
      return ctx.services.explore.dataset.status();
    },
  }),
}));
