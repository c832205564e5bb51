/**
 * The investigation document (wire.md 8.3), as stored in `investigations.analysis` and exposed by
 * GraphQL in camelCase; the REST operation aliases every field to the wire's snake_case. Optional
 * wire fields are `null` here, never absent, and lists are never null (wire.md 16).
 */

export const DISPOSITIONS = ['benign', 'malicious', 'escalate'] as const;
export type Disposition = (typeof DISPOSITIONS)[number];

export interface Verdict {
  disposition: Disposition;
  /** 0..1. */
  confidence: number;
  headline: string;
  rationale: string;
}

export interface AtAGlance {
  known: string;
  unknown: string | null;
  therefore: string;
}

/** The detector's quantified reason for flagging (docs/detections.md defines each per detector). */
export interface TriggerSignal {
  volumeBytes: number | null;
  anomalyScore: number | null;
  surprise: number | null;
  mismatch: number | null;
}

export interface Trigger {
  source: string | null;
  destination: string | null;
  /** ISO 8601. */
  detectedAt: string | null;
  signal: TriggerSignal;
}

export interface TimelineEvent {
  at: string;
  label: string;
  children: TimelineEvent[];
}

/** A flow search (wire.md 5.1) that shows the evidence, minus the tenant: `{query, start, end}`. */
export interface TrafficQuery {
  /** PQL sentence, replayed as the search's `sentence`. */
  query: string;
  start: { absolute: { date: string } };
  end: { absolute: { date: string } };
}

export interface TrafficLink {
  label: string;
  rationale: string | null;
  query: TrafficQuery | null;
}

export type FindingRole = 'decisive' | 'supporting' | 'ambiguous' | 'context' | 'data_gap';
export type Importance = 'high' | 'medium' | 'low';

export interface KeyFinding {
  headline: string;
  observation: string;
  significance: string;
  role: FindingRole | null;
  importance: Importance | null;
  rulesOut: string[];
  confirms: string[];
  timeline: TimelineEvent[] | null;
  trafficLinks: TrafficLink[] | null;
}

export interface HostValue {
  role: string;
  value: 'low' | 'moderate' | 'high';
  reach: string | null;
}

export type LegStage = 'access' | 'identity' | 'execution' | 'collection' | 'exfiltration' | 'lateral' | 'command_and_control';
export type LegConfidence = 'directly_observed' | 'inferred' | 'not_established';
export type ActorKind = 'human' | 'account' | 'process' | 'source_ip' | 'tool' | 'path' | 'destination';

export interface ProvenanceActor {
  kind: ActorKind;
  label: string;
  detail: string | null;
}

/** MITRE ATT&CK (Enterprise) technique. */
export interface AttackRef {
  tactic: string;
  techniqueId: string;
  technique: string;
}

export interface ProvenanceLeg {
  stage: LegStage;
  title: string;
  headline: string;
  detail: string | null;
  confidence: LegConfidence;
  gapReason: string | null;
  at: string | null;
  actors: ProvenanceActor[];
  attack: AttackRef[];
  pivotKeys: string[];
}

export interface Provenance {
  available: boolean;
  unavailableReason: string | null;
  headline: string | null;
  host: string | null;
  /** Share of the legs directly observed, 0..1. */
  completeness: number;
  hostValue: HostValue | null;
  legs: ProvenanceLeg[];
}

export interface OpenQuestion {
  question: string;
  neededData: string | null;
  priority: 'highest' | 'high' | 'medium' | 'low' | null;
}

export interface RecommendedAction {
  /** `immediately`, `within_1h`, `within_4h`, `within_24h`, `within_7d`. */
  timeframe: string;
  action: string;
}

export interface DecisionSupport {
  confidenceLimits: string | null;
  whatWouldChangeTheVerdict: string | null;
  openQuestions: OpenQuestion[];
  recommendedActions: RecommendedAction[];
}

export interface InvestigationMeta {
  generatedAt: string | null;
  aiGenerated: boolean;
  analysisVersion: string | null;
}

/** Everything analysis produces; `null` until an investigation's analysis has completed. */
export interface Analysis {
  trigger: Trigger;
  verdict: Verdict | null;
  atAGlance: AtAGlance | null;
  keyFindings: KeyFinding[];
  provenance: Provenance | null;
  decisionSupport: DecisionSupport;
  meta: InvestigationMeta;
}

/** Bumped when the analysis a detector writes changes shape or meaning. */
export const ANALYSIS_VERSION = 'rules-1';
