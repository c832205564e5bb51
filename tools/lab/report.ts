// After the traffic: detection over the run, each opened investigation read back over REST, and
// the comparison of what was found with what each attack should have opened.

import type { Expected } from './scenarios.js';
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
}

export interface LabReport {
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

export async function detectAndReport(server: LabServer, tenant: LabTenant, windowMinutes: number, expected: Expected[]): Promise<LabReport> {
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
  const outcomes = expected.map((e) => ({
    expected: e,
    matches: found.filter((f) => f.detector === e.detector && f.source === e.source && f.destination === e.destination),
  }));
  const explained = new Set(outcomes.flatMap((o) => o.matches.map((m) => m.id)));
  return { found, outcomes, unexpected: found.filter((f) => !explained.has(f.id)) };
}

/** The summary a person reads: every investigation, then each attack's verdict. */
export function formatReport(report: LabReport): string {
  const lines = [`Investigations opened: ${report.found.length}`];
  for (const f of report.found) {
    lines.push(`  ${f.detector.padEnd(10)} ${`${f.sourceHost} (${f.source})`.padEnd(20)} → ${f.destination.padEnd(18)} ${f.disposition ?? '-'} ${f.confidence?.toFixed(2) ?? '-'}  process: ${f.process}`);
    lines.push(`             ${f.headline}`);
  }
  lines.push('', 'Attacks:');
  for (const o of report.outcomes) {
    const e = o.expected;
    const verdict = o.matches.length === 1 ? 'found' : o.matches.length === 0 ? 'MISSED' : `found ${o.matches.length} times`;
    lines.push(`  ${e.detector.padEnd(10)} ${e.sourceHost} (${e.source}) → ${e.destination}: ${verdict}`);
  }
  if (report.outcomes.length === 0) lines.push('  none played');
  lines.push('', `Not explained by an attack (false positives): ${report.unexpected.length}`);
  return lines.join('\n');
}
