/**
 * Investigations for tests and benchmarks, analysed by the real detector code (assessment, story,
 * narrative) from a typical episode, and written straight to the table: no flows needed.
 */
import type { Prisma as PrismaTypes } from '../../generated/prisma/client.js';
import type { Prisma } from '../../infra/database.js';
import { newId } from '../../infra/ids.js';
import { detectorOf } from '../detection/detectors/index.js';
import { type DetectorKind, type Episode, emptyFacts } from '../detection/episode.js';
import { hostValue } from '../detection/host-context.js';
import { buildAnalysis } from '../detection/narrative.js';
import { subjectOf } from '../detection/runner.js';
import type { Disposition } from './investigation.model.js';

export interface InvestigationFixture {
  detector?: DetectorKind;
  source?: string;
  status?: 'running' | 'completed' | 'failed';
  disposition?: Disposition;
  confidence?: number;
  severity?: number;
  createdAt?: Date;
  nodeIds?: string[];
}

/** A typical beacon episode, reshaped for the other detectors where their story needs it. */
export function fixtureEpisode(detector: DetectorKind, source: string, lastMs: number): Episode {
  const firstMs = lastMs - 3_600_000;
  const facts = {
    ...emptyFacts(),
    sourceFqdn: 'ws-0014.corp.example.com',
    processes: ['rundll32.exe'],
    destinationIps: ['45.148.10.83'],
    ports: [443],
    fqdns: ['update.cloudsync-services.org'],
    tlsVersions: ['TLS 1.2'],
    resolvers: ['10.10.0.10'],
    rrtypes: ['TXT'],
    targetFqdn: 'bastion01.corp.example.com',
  };
  const destination = {
    beacon: 'Stark Industries Solutions Ltd',
    exfil: 'Contabo GmbH',
    scan: '10.10.0.0/24',
    bruteforce: '172.16.10.5',
    'dns-tunnel': 'cdn-metrics-sync.com',
  }[detector];
  return {
    detector,
    source,
    destination,
    firstMs,
    lastMs,
    measures: {
      sessions: 100,
      median_gap_secs: 36,
      gap_cv: 0.03,
      org_sources: 1,
      upload_bytes: 600 * 2 ** 20,
      download_bytes: 2 ** 20,
      task_fetches: 2,
      sensor_beacon_flows: 90,
      sensor_interval_ms: 36_000,
      sensor_confidence: 0.9,
      upload_ratio: 600,
      flows: 24,
      new_destination: 1,
      payload_entropy: 7.9,
      lanes: 4,
      largest_flow_bytes: 64 * 2 ** 20,
      targets: 5080,
      peak_targets: 5080,
      hosts: 254,
      ports: 20,
      failed_share: 1,
      probes_per_second: 40,
      follow_on_sessions: 0,
      attempts: 400,
      peak_attempts: 260,
      attempts_per_minute: 27,
      threat_flows: 400,
      bytes: 2_000_000,
      queries: 2500,
      unique_names: 2500,
      unique_share: 1,
      mean_label_length: 36,
      peak_queries: 850,
    },
    facts,
    activity: [{ atMs: firstMs, label: '100 check-ins in the hour from here' }],
    nodeIds: [],
    alerts: 3,
    host: { ip: source, fqdn: facts.sourceFqdn },
  };
}

/** The row a detection run would have written for such an episode. */
export function investigationRow(customerId: string, f: InvestigationFixture = {}): PrismaTypes.InvestigationCreateManyInput {
  const kind = f.detector ?? 'beacon';
  const detector = detectorOf(kind)!;
  const createdAt = f.createdAt ?? new Date();
  const episode = { ...fixtureEpisode(kind, f.source ?? '10.20.1.23', createdAt.getTime() - 60_000), nodeIds: f.nodeIds ?? [] };
  const assessed = detector.assess(episode);
  const assessment = {
    ...assessed,
    disposition: f.disposition ?? assessed.disposition,
    confidence: f.confidence ?? assessed.confidence,
    severity: f.severity ?? assessed.severity,
  };
  const host = { ip: episode.source, hostname: 'ws-0014', node: null, observers: [], value: hostValue('ws-0014', episode.source, 'windows') };
  const story = detector.story(episode, assessment, host);
  const status = f.status ?? 'completed';
  const finished = status === 'completed';
  return {
    id: newId('inv'),
    customerId,
    detector: kind,
    subject: subjectOf(episode),
    // Unique per row: fixtures stand for distinct episodes, whatever their times.
    fingerprint: newId('fp'),
    status,
    disposition: finished ? assessment.disposition : null,
    confidence: finished ? assessment.confidence : null,
    severity: assessment.severity,
    headline: story.headline,
    source: episode.source,
    destination: episode.destination,
    tags: story.tags,
    relatedAlertsCount: episode.alerts,
    nodeIds: episode.nodeIds,
    evidence: episode as unknown as PrismaTypes.InputJsonValue,
    analysis: finished
      ? (buildAnalysis(episode, assessment, host, story, createdAt.getTime(), createdAt.getTime()) as unknown as PrismaTypes.InputJsonValue)
      : undefined,
    firstActivityAt: new Date(episode.firstMs),
    lastActivityAt: new Date(episode.lastMs),
    detectedAt: createdAt,
    closedAt: createdAt,
    completedAt: status === 'running' ? null : createdAt,
    createdAt,
  };
}

export async function seedInvestigation(prisma: Prisma, customerId: string, f: InvestigationFixture = {}): Promise<string> {
  const row = investigationRow(customerId, f);
  await prisma.investigation.create({ data: row });
  return row.id!;
}
