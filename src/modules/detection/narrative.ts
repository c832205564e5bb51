import {
  ANALYSIS_VERSION,
  type Analysis,
  type AttackRef,
  type OpenQuestion,
  type ProvenanceActor,
  type ProvenanceLeg,
  type TimelineEvent,
  type TrafficLink,
} from '../investigations/investigation.model.js';
import type { Assessment, Episode, ObservedProcess, Story } from './episode.js';
import type { HostContext } from './host-context.js';

export const iso = (ms: number) => new Date(ms).toISOString();

/** A PQL value: bare when it is a plain token (what the SDK sends), else double-quoted. */
function pqlValue(value: string | number): string {
  const text = String(value);
  return /^[A-Za-z0-9._:/*-]+$/.test(text) ? text : `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** PQL conditions for traffic-link queries. */
export const pql = {
  eq: (field: string, value: string | number) => `${field} eq ${pqlValue(value)}`,
  in: (field: string, values: (string | number)[]) => (values.length === 1 ? pql.eq(field, values[0]) : `${field} in [${values.map(pqlValue).join(', ')}]`),
  wi: (field: string, pattern: string) => `${field} wi ${pqlValue(pattern)}`,
};

/**
 * A link to the flows behind a finding: a search (wire.md 5.1) without the tenant, replayable as
 * `{instance_ids: [customer], sentence: query, start, end}`. The window is padded by a minute on
 * each side so that the first and last flows are inside it.
 */
export function trafficLink(label: string, rationale: string | null, conditions: string[], fromMs: number, toMs: number): TrafficLink {
  return {
    label,
    rationale,
    query: {
      query: conditions.join(' and '),
      start: { absolute: { date: iso(fromMs - 60_000) } },
      end: { absolute: { date: iso(toMs + 60_000) } },
    },
  };
}

export const event = (atMs: number, label: string, children: TimelineEvent[] = []): TimelineEvent => ({ at: iso(atMs), label, children });

/** First activity, the episode's activity buckets (as children), last activity. */
export function episodeTimeline(episode: Episode, first: string, last: string, middle: TimelineEvent[] = []): TimelineEvent[] {
  const activity = episode.activity.map((a) => event(a.atMs, a.label));
  return [event(episode.firstMs, first, activity), ...middle, event(episode.lastMs, last)].sort((a, b) => a.at.localeCompare(b.at));
}

export const actor = (kind: ProvenanceActor['kind'], label: string, detail: string | null = null): ProvenanceActor => ({ kind, label, detail });
export const attack = (tactic: string, techniqueId: string, technique: string): AttackRef => ({ tactic, techniqueId, technique });

export function leg(
  stage: ProvenanceLeg['stage'],
  title: string,
  headline: string,
  rest: Partial<Omit<ProvenanceLeg, 'stage' | 'title' | 'headline'>> = {},
): ProvenanceLeg {
  return {
    stage,
    title,
    headline,
    detail: rest.detail ?? null,
    confidence: rest.confidence ?? 'directly_observed',
    gapReason: rest.gapReason ?? null,
    at: rest.at ?? null,
    actors: rest.actors ?? [],
    attack: rest.attack ?? [],
    pivotKeys: rest.pivotKeys ?? [],
  };
}

/**
 * The execution leg: the process that owned the source's sockets. Directly observed when the flows
 * carry its host context (a pid, and the program and user when known: what a collector on the
 * host reads from /proc); inferred when they only name a program; a gap when they name none.
 */
export function executionLeg(episode: Episode, host: HostContext, techniques: (process: string) => AttackRef[]): ProvenanceLeg {
  const process = episode.facts.processes[0];
  const where = host.hostname ?? episode.source;
  if (!process) {
    return leg('execution', 'Execution', `The program behind the traffic on ${where} is not known`, {
      confidence: 'not_established',
      gapReason: 'The flows carry no process: the collector on this segment has no host logs for the source.',
      pivotKeys: [`src.ip=${episode.source}`],
    });
  }
  const others = episode.facts.processes.slice(1);
  const alsoSeen = others.length ? `Also seen: ${others.join(', ')}.` : null;
  const collector = host.node ? [actor('tool', `collector ${host.node.id}`, 'host context')] : [];
  const observed = episode.facts.observedProcesses.filter((p) => p.name === process);
  if (observed.length === 0) {
    return leg('execution', 'Execution', `${process} on ${where} opened the connections`, {
      detail: alsoSeen,
      confidence: 'inferred',
      gapReason: 'The flows name the program but carry no process id, program path or user: which instance ran it, and for whom, is not established.',
      at: iso(episode.firstMs),
      actors: [actor('process', process, `on ${where}`), ...collector],
      attack: techniques(process),
      pivotKeys: [`process.name=${process}`, `src.ip=${episode.source}`],
    });
  }
  const first = observed[0];
  const pids = observed.map((p) => p.pid);
  const accounts = uniqUsers(observed);
  const program = first.executable ? `${first.executable}, ` : '';
  return leg('execution', 'Execution', `${process} (pid ${list(pids, 3)}${first.user ? `, user ${first.user}` : ''}) on ${where} opened the connections`, {
    detail: [`The owning process was observed on the host: ${observed.map(describeProcess).join('; ')}.`, alsoSeen].filter(Boolean).join(' '),
    at: iso(episode.firstMs),
    actors: [
      actor('process', process, `${program}pid ${list(pids, 3)} on ${where}`),
      ...accounts.map((a) => actor('account', a.label, a.detail ? `${a.detail} on ${where}` : `on ${where}`)),
      ...collector,
    ],
    attack: techniques(process),
    pivotKeys: [
      `process.name=${process}`,
      ...pids.slice(0, 3).map((pid) => `process.pid=${pid}`),
      ...accounts.flatMap((a) => a.pivot),
      `src.ip=${episode.source}`,
    ],
  });
}

function describeProcess(p: ObservedProcess): string {
  const user = p.user ?? (p.uid !== null ? `uid ${p.uid}` : null);
  return [`pid ${p.pid}`, p.executable, user ? `user ${user}` : null].filter(Boolean).join(', ');
}

/** The accounts the processes ran as: the name when the host has one, else the uid. */
function uniqUsers(observed: ObservedProcess[]): { label: string; detail: string | null; pivot: string[] }[] {
  const accounts = new Map<string, { label: string; detail: string | null; pivot: string[] }>();
  for (const p of observed) {
    if (p.user === null && p.uid === null) continue;
    const label = p.user ?? `uid ${p.uid}`;
    const uid = p.uid === null ? [] : [`uid=${p.uid}`];
    accounts.set(label, { label, detail: p.user !== null && p.uid !== null ? `uid ${p.uid}` : null, pivot: uid });
  }
  return [...accounts.values()];
}

const AUTHORIZED: OpenQuestion = {
  question: 'Was this activity authorized?',
  neededData: 'Change tickets, penetration-test schedules, or confirmation from the owner of the source host.',
  priority: 'highest',
};

/** The question every investigation leaves to a human, first, then the detector's own. */
export function openQuestions(story: Story): OpenQuestion[] {
  return [AUTHORIZED, ...story.questions.filter((q) => q.question !== AUTHORIZED.question)];
}

/** Assembles the wire document (wire.md 8.3) around a detector's story. */
export function buildAnalysis(episode: Episode, assessment: Assessment, host: HostContext, story: Story, detectedAtMs: number, nowMs: number): Analysis {
  const directly = story.legs.filter((l) => l.confidence === 'directly_observed').length;
  return {
    trigger: {
      source: episode.source,
      destination: episode.destination,
      detectedAt: iso(detectedAtMs),
      signal: assessment.signal,
    },
    verdict: {
      disposition: assessment.disposition,
      confidence: assessment.confidence,
      headline: story.headline,
      rationale: story.rationale,
    },
    atAGlance: { known: story.known, unknown: story.unknown, therefore: story.therefore },
    keyFindings: story.findings,
    provenance: {
      available: story.legs.length > 0,
      unavailableReason: story.legs.length > 0 ? null : 'No host or network context for this episode.',
      headline: `${host.hostname ?? host.ip} (${host.ip}), ${host.value.role}`,
      host: host.hostname ?? host.ip,
      completeness: story.legs.length ? Math.round((directly / story.legs.length) * 100) / 100 : 0,
      hostValue: host.value,
      legs: story.legs,
    },
    decisionSupport: {
      confidenceLimits: story.confidenceLimits,
      whatWouldChangeTheVerdict: story.whatWouldChange,
      openQuestions: openQuestions(story),
      recommendedActions: story.actions,
    },
    meta: { generatedAt: iso(nowMs), aiGenerated: false, analysisVersion: ANALYSIS_VERSION },
  };
}

/** `1.4 GB`, `512 KB`: bytes for people. */
export function bytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = n;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value >= 100 || unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

/** `36 s`, `12 min`, `3.5 h`. */
export function duration(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

export const list = (items: (string | number)[], max = 5) =>
  items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
