// After the traffic: detection over the run, each opened investigation read back over REST, and
// the comparison of what was found with what each attack should have opened.

import { isIP } from 'node:net';
import type { Expected } from './scenarios.js';
import type { SensorSummary } from './sensors.js';
import type { LabServer, LabTenant } from './server.js';
import { OFFICE_HOSTS, webServers } from './topology.js';

export interface Found {
  id: string;
  detector: string;
  source: string;
  sourceHost: string;
  destination: string;
  disposition: string | null;
  confidence: number | null;
  /** The program the execution leg names, or why it could not. */
  process: string;
  headline: string;
}

export interface Outcome {
  expected: Expected;
  /** The investigations of the expected detector, source and destination (one when all is well). */
  matches: Found[];
  /** When missed and the destination is one address (a lab server's): the flows the server holds from the source to it. */
  traffic?: ConversationFlows[];
}

/** One sensor's flows of a conversation: when each began, oldest first. */
export interface ConversationFlows {
  /** The sensor's kind and the host it named: `packet (ws2)`, `ipfix (127.0.0.1)`. */
  sensor: string;
  address: string;
  startsMs: number[];
}

export interface LabReport {
  /** Flows the server stored in the detection window, by the kind of sensor (`packet`, `ipfix`). */
  stored: Record<string, number>;
  found: Found[];
  outcomes: Outcome[];
  /** Investigations no attack explains: false positives. */
  unexpected: Found[];
}

const hostName = (address: string) => OFFICE_HOSTS.find((h) => h.ip === address)?.name ?? webServers().find((s) => s.ip === address)?.name ?? address;

/** The process of the execution leg, or "not observed" with the leg's reason. */
function processOf(document: any): string {
  const execution = document?.provenance?.legs?.find((l: any) => l.stage === 'execution');
  const process = execution?.actors?.find((a: any) => a.kind === 'process')?.label;
  return process ?? 'not observed (flows carry no process)';
}

/** The run's stored flows counted by `meta.flow_types` (one sensor kind each), over the detection window. */
async function storedBySensorKind(server: LabServer, tenant: LabTenant, windowMinutes: number): Promise<Record<string, number>> {
  const res = await server.api('POST', '/search/agg/1.0', {
    token: tenant.token,
    body: {
      instance_ids: [tenant.customerId],
      module: 'flows',
      start: { relative: { value: windowMinutes, unit: 'minutes' } },
      end: { now: true },
      field: 'meta.flow_types',
      size: 10,
    },
  });
  if (res.status !== 200) throw new Error(`counting the stored flows: ${res.status} ${JSON.stringify(res.body)}`);
  const buckets: { key: string; doc_count: number }[] = res.body[tenant.customerId]?.buckets ?? [];
  return Object.fromEntries(buckets.map((b) => [b.key, b.doc_count]));
}

/**
 * The flows from `source` to `address` the server stored in the window, by sensor: what a
 * person reads to see why an attack on that destination was missed (a lost check-in, a split flow).
 */
async function conversationFlows(server: LabServer, tenant: LabTenant, windowMinutes: number, source: string, address: string): Promise<ConversationFlows[]> {
  const res = await server.api('POST', '/search/records/1.0', {
    token: tenant.token,
    body: {
      instance_ids: [tenant.customerId],
      module: 'flows',
      sentence: `src.ip eq ${source} and dst.ip eq ${address}`,
      start: { relative: { value: windowMinutes, unit: 'minutes' } },
      end: { now: true },
      sort: [{ field: '@timestamp', order: 'asc' }],
      fields: ['meta.flow_types', 'path'],
      size: 1000,
      page: 0,
    },
  });
  if (res.status !== 200) throw new Error(`reading the flows ${source} → ${address}: ${res.status} ${JSON.stringify(res.body)}`);
  const bySensor = new Map<string, number[]>();
  for (const flow of res.body[tenant.customerId]?.flows ?? []) {
    const host = flow.path?.[0]?.sensor?.hostname;
    const sensor = `${flow.meta?.flow_types?.[0] ?? 'unknown'}${host ? ` (${host})` : ''}`;
    const starts = bySensor.get(sensor) ?? [];
    starts.push(Number(flow['@timestamp']));
    bySensor.set(sensor, starts);
  }
  return [...bySensor].map(([sensor, startsMs]) => ({ sensor, address, startsMs }));
}

export async function detectAndReport(server: LabServer, tenant: LabTenant, windowMinutes: number, expected: Expected[]): Promise<LabReport> {
  const stored = await storedBySensorKind(server, tenant, windowMinutes);
  const run = await server.admin(['detect', 'run', '--customer', tenant.customerId, '--window-minutes', String(windowMinutes)], 300_000);
  const found: Found[] = [];
  for (const inv of [...run.opened, ...run.updated]) {
    const document = await server.api('GET', `/rest/investigations/1.0/${inv.id}`, { token: tenant.token });
    found.push({
      id: inv.id,
      detector: inv.detector,
      source: inv.source,
      sourceHost: hostName(inv.source),
      destination: inv.destination,
      disposition: inv.disposition,
      confidence: inv.confidence,
      process: document.status === 200 ? processOf(document.body) : `unreadable (${document.status})`,
      headline: inv.headline,
    });
  }
  const outcomes: Outcome[] = [];
  for (const e of expected) {
    const matches = found.filter((f) => f.detector === e.detector && f.source === e.source && f.destination === e.destination);
    const address = isIP(e.destination) ? e.destination : webServers().find((s) => s.organization === e.destination)?.ip;
    const traffic = matches.length === 0 && address ? await conversationFlows(server, tenant, windowMinutes, e.source, address) : undefined;
    outcomes.push({ expected: e, matches, ...(traffic && { traffic }) });
  }
  const explained = new Set(outcomes.flatMap((o) => o.matches.map((m) => m.id)));
  return { stored, found, outcomes, unexpected: found.filter((f) => !explained.has(f.id)) };
}

/** Flows a sensor's collector had acknowledged by the server when it stopped. */
export const flowsSent = (sensor: SensorSummary): number => Number(sensor.summary.sent ?? 0);

/** One line per sensor: its node, the flows it delivered and what its capture lost. */
function sensorLine(s: SensorSummary): string {
  const x = s.summary as Record<string, any>;
  const lost = x.exports
    ? `IPFIX: ${x.exports.datagrams} datagrams, ${x.exports.records} records, drops ${JSON.stringify(x.exports.dropped)}; softflowd's tcpdump dropped ${s.capture?.droppedByKernel ?? '?'} of ${s.capture?.captured ?? '?'} packets`
    : `${x.packets_read} packets metered, ${(x.interfaces ?? []).reduce((n: number, i: any) => n + (i.dropped_by_kernel ?? 0), 0)} dropped by the kernel`;
  return `  ${s.name.padEnd(10)} node ${x.node_id}: ${flowsSent(s)} flows delivered (${lost})`;
}

/** Flows of a missed conversation whose gaps are listed; more (a brute force's) are summed up. */
const LISTED_GAPS = 40;

/** "13 packet (router) flows to 203.0.113.80, gaps (s): 11.2 10.9 …": the cadence a beacon's miss is judged by. */
function trafficLine(t: ConversationFlows): string {
  const n = t.startsMs.length;
  const gaps = t.startsMs.slice(1).map((at, i) => ((at - t.startsMs[i]!) / 1000).toFixed(1));
  const detail =
    n > LISTED_GAPS ? `, over ${((t.startsMs[n - 1]! - t.startsMs[0]!) / 1000).toFixed(0)} s` : gaps.length > 0 ? `, gaps (s): ${gaps.join(' ')}` : '';
  return `${n} ${t.sensor} flows to ${t.address}${detail}`;
}

/** The summary a person reads: the sensors, every investigation, then each attack's verdict. */
export function formatReport(report: LabReport & { sensors: SensorSummary[] }): string {
  const stored = Object.entries(report.stored)
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
  const lines = [
    'Sensors:',
    ...report.sensors.map(sensorLine),
    `  stored in the detection window: ${stored || 'none'} flows`,
    '',
    `Investigations opened: ${report.found.length}`,
  ];
  for (const f of report.found) {
    lines.push(
      `  ${f.detector.padEnd(10)} ${`${f.sourceHost} (${f.source})`.padEnd(20)} → ${f.destination.padEnd(18)} ${f.disposition ?? '-'} ${f.confidence?.toFixed(2) ?? '-'}  process: ${f.process}`,
    );
    lines.push(`             ${f.headline}`);
  }
  lines.push('', 'Attacks:');
  for (const o of report.outcomes) {
    const e = o.expected;
    const verdict = o.matches.length === 1 ? 'found' : o.matches.length === 0 ? 'MISSED' : `found ${o.matches.length} times`;
    lines.push(`  ${e.detector.padEnd(10)} ${e.sourceHost} (${e.source}) → ${e.destination}: ${verdict}`);
    for (const t of o.traffic ?? []) lines.push(`             ${trafficLine(t)}`);
  }
  if (report.outcomes.length === 0) lines.push('  none played');
  lines.push('', `Not explained by an attack (false positives): ${report.unexpected.length}`);
  return lines.join('\n');
}
