import type { ActivityRow, DetectionStore, TimeWindow } from '../detection.store.js';
import {
  type Assessment,
  type Detector,
  type Episode,
  type Story,
  MINUTE,
  clamp01,
  decide,
  emptyFacts,
  margin,
  observedProcesses,
  round,
  uniq,
} from '../episode.js';
import type { HostContext } from '../host-context.js';
import { actor, attack, bytes, duration, episodeTimeline, event, executionLeg, iso, leg, list, pql, trafficLink } from '../narrative.js';
import { RARITY_BASELINE_MS, isLolbin, knownAgent } from './common.js';

/** docs/detections.md "Beaconing". */
export const BEACON_THRESHOLDS = {
  /** Cadence needs history: the detector reads at least this far back, whatever the run's window. */
  lookbackMs: 6 * 60 * MINUTE,
  /** Per (internal source, external organization): at least this many sessions... */
  minSessions: 12,
  /** ...whose start-to-start gaps have a coefficient of variation at most this... */
  maxGapCv: 0.25,
  /**
   * ...a gap of two or three beats counting as that many beats (a lost or skipped check-in) while
   * at most one gap in this many is so; past that, the gaps are measured as they are...
   */
  maxMissedShare: 6,
  /** ...and the gaps farthest from the median, one in this many (a delayed or split check-in), are left out... */
  maxOddShare: 6,
  /** ...with a median gap in this range... */
  minGapMs: 10_000,
  maxGapMs: 3_600_000,
  /** ...to an organization at most this many internal hosts reached over the rarity baseline. */
  maxOrgSources: 2,
  /** A check-in that downloads more than this is a task fetch (context only). */
  taskBytes: 10_000,
};

const T = BEACON_THRESHOLDS;

export const beaconDetector: Detector = {
  kind: 'beacon',

  async detect(store: DetectionStore, customerId: string, window: TimeWindow): Promise<Episode[]> {
    const span = { fromMs: Math.min(window.fromMs, window.toMs - T.lookbackMs), toMs: window.toMs };
    // The SQL pre-filter is twice as loose as the thresholds; the thresholds are applied here.
    const rows = await store.beaconCandidates(customerId, span, {
      minSessions: T.minSessions,
      maxGapCv: T.maxGapCv * 2,
      minGapMs: T.minGapMs / 2,
      maxGapMs: T.maxGapMs * 2,
      maxMissedShare: T.maxMissedShare,
      maxOddShare: T.maxOddShare,
    });
    const cadenced = rows.filter((r) => r.gap_cv <= T.maxGapCv && r.median_gap_ms >= T.minGapMs && r.median_gap_ms <= T.maxGapMs);
    const reach = await store.orgReach(customerId, uniq(cadenced.map((r) => r.destination)), { fromMs: window.toMs - RARITY_BASELINE_MS, toMs: window.toMs });
    const episodes: Episode[] = [];
    for (const r of cadenced) {
      const sources = reach.get(r.destination)?.sources ?? 1;
      if (sources > T.maxOrgSources) continue;
      const flows = await store.pairActivity(customerId, span, { source: r.source, org: r.destination, limit: 20_000 });
      const tasks = flows.filter((f) => f.down > T.taskBytes);
      episodes.push({
        detector: 'beacon',
        source: r.source,
        destination: r.destination,
        firstMs: Number(r.first_ms),
        lastMs: Number(r.last_ms),
        measures: {
          sessions: Number(r.sessions),
          median_gap_secs: round(r.median_gap_ms / 1000, 1),
          gap_cv: round(r.gap_cv, 3),
          org_sources: sources,
          upload_bytes: Number(r.up),
          download_bytes: Number(r.down),
          task_fetches: tasks.length,
          sensor_beacon_flows: Number(r.sensor_beacon_flows),
          sensor_interval_ms: r.sensor_interval_ms ?? 0,
          sensor_confidence: r.sensor_confidence ?? 0,
        },
        facts: {
          ...emptyFacts(),
          sourceFqdn: r.source_fqdn,
          processes: r.processes,
          observedProcesses: observedProcesses(r.observed_processes),
          destinationIps: r.dst_ips,
          ports: r.ports,
          fqdns: r.fqdns,
          tlsVersions: r.tls_versions,
          alertSignatures: r.alert_signatures,
        },
        activity: [...hourly(flows), ...tasks.slice(0, 10).map((f) => ({ atMs: Number(f.at_ms), label: `Task fetch: ${bytes(f.down)} downloaded` }))].sort(
          (a, b) => a.atMs - b.atMs,
        ),
        nodeIds: r.node_ids,
        alerts: Number(r.alerts),
        host: { ip: r.source, fqdn: r.source_fqdn },
      });
    }
    return episodes;
  },

  assess(e: Episode): Assessment {
    const m = e.measures;
    const regularity = clamp01(1 - m.gap_cv / T.maxGapCv);
    const corroboration: string[] = [];
    let confidence = 0.55 + 0.2 * regularity + 0.1 * margin(m.sessions, T.minSessions, 4);
    if (m.sensor_beacon_flows > 0) {
      confidence += 0.08;
      corroboration.push(`the sensor's beacon engine classified ${m.sensor_beacon_flows} of the sessions as beaconing`);
    }
    if (m.org_sources === 1) {
      confidence += 0.05;
      corroboration.push('no other internal host reaches this organization');
    }
    const process = e.facts.processes.find(isLolbin);
    if (process) {
      confidence += 0.07;
      corroboration.push(`the connections come from ${process}, a system binary attackers use to run their code`);
    }
    const agent = e.facts.processes.length > 0 && e.facts.processes.every(knownAgent);
    if (agent) corroboration.push(`the connections come from ${e.facts.processes.join(', ')}, a known agent that polls its service on a schedule`);
    return {
      ...decide(90, Math.min(0.97, confidence), agent),
      signal: {
        volumeBytes: m.upload_bytes + m.download_bytes,
        anomalyScore: round(regularity, 3),
        surprise: round(Math.log2(m.sessions / T.minSessions), 2),
        mismatch: round(m.gap_cv, 3),
      },
      corroboration,
    };
  },

  quietMs: (e) => Math.max(15 * MINUTE, 5 * e.measures.median_gap_secs * 1000),

  story(e: Episode, a: Assessment, host: HostContext): Story {
    const m = e.measures;
    const who = host.hostname ?? e.source;
    const every = duration(m.median_gap_secs * 1000);
    const span = duration(e.lastMs - e.firstMs);
    const dests = list(e.facts.destinationIps);
    const names = e.facts.fqdns.length ? ` (${list(e.facts.fqdns, 3)})` : '';
    const process = e.facts.processes[0];
    const link = (label: string, rationale: string, extra: string[] = []) =>
      trafficLink(label, rationale, [pql.eq('src.ip', e.source), pql.in('dst.ip', e.facts.destinationIps), ...extra], e.firstMs, e.lastMs);
    const benign = a.disposition === 'benign';
    return {
      headline: benign ? `${who} polls ${e.destination} on a schedule (known agent)` : `${who} beacons to ${e.destination} every ${every}`,
      rationale:
        `${m.sessions} sessions from ${e.source} to ${dests}${names} over ${span}, a median ${every} apart with a gap coefficient of variation of ${m.gap_cv} ` +
        `(at most ${T.maxGapCv} fires); ${m.org_sources} internal host(s) reached ${e.destination} in the last 24 h.` +
        (a.corroboration.length ? ` Also: ${a.corroboration.join('; ')}.` : ''),
      known: `${who} (${e.source}) has contacted ${e.destination} ${m.sessions} times at a fixed ${every} cadence since ${iso(e.firstMs)}, with small, uniform payloads.`,
      unknown: 'What the sessions carry (they are encrypted), how the program got onto the host, and who operates the destination.',
      therefore: benign
        ? 'This looks like a legitimate agent; confirm the destination belongs to its vendor and close.'
        : `Treat ${who} as compromised: a machine-regular check-in to a destination nobody else uses is how implants talk to their operators.`,
      findings: [
        {
          headline: `Check-ins every ${every} with ${Math.round(m.gap_cv * 100)}% variation`,
          observation: `${m.sessions} sessions to ${dests} on port ${list(e.facts.ports)}; median gap ${m.median_gap_secs} s, coefficient of variation ${m.gap_cv}.`,
          significance: 'People and ordinary applications produce irregular gaps (a variation near 100%); a timer produces this.',
          role: 'decisive',
          importance: 'high',
          rulesOut: ['interactive browsing', 'ordinary application traffic'],
          confirms: ['automated periodic check-in'],
          timeline: episodeTimeline(e, 'First check-in', 'Last check-in seen'),
          trafficLinks: [link('The check-ins', 'Every session of this host to the destination.')],
        },
        {
          headline: `${e.destination} is reached by ${m.org_sources} internal host${m.org_sources === 1 ? '' : 's'}`,
          observation: `Over the last 24 h only ${m.org_sources} internal host(s) contacted ${e.destination}${e.facts.tlsVersions.length ? `, over ${list(e.facts.tlsVersions)}` : ''}.`,
          significance:
            'Popular services are reached by many hosts; an agent or update service would be too. A destination only this host uses is unexplained.',
          role: 'supporting',
          importance: 'medium',
          rulesOut: ['a fleet-wide agent or SaaS service'],
          confirms: [],
          timeline: null,
          trafficLinks: [
            trafficLink(`Everything sent to ${e.destination}`, 'Any host, any port.', [pql.in('dst.ip', e.facts.destinationIps)], e.firstMs, e.lastMs),
          ],
        },
        ...(m.task_fetches > 0
          ? [
              {
                headline: `${m.task_fetches} check-ins downloaded more than ${bytes(T.taskBytes)}`,
                observation: `Most check-ins move a few hundred bytes each way; ${m.task_fetches} downloaded more, the pattern of an operator handing out tasks.`,
                significance: 'Suggests the channel is in use, not only alive.',
                role: 'context' as const,
                importance: 'medium' as const,
                rulesOut: [],
                confirms: ['interactive use of the channel'],
                timeline: e.activity.filter((x) => x.label.startsWith('Task')).map((x) => event(x.atMs, x.label)),
                trafficLinks: [link('The larger check-ins', 'Sessions with more than 10 KB downloaded.', ['stats.volume.bytes.dst.sum gt 10000'])],
              },
            ]
          : []),
        {
          headline: 'Payloads are not visible',
          observation: `The sessions are encrypted${e.facts.tlsVersions.length ? ` (${list(e.facts.tlsVersions)})` : ''}; only sizes and timing are known.`,
          significance: 'The verdict rests on behaviour, not content.',
          role: 'data_gap',
          importance: 'low',
          rulesOut: [],
          confirms: [],
          timeline: null,
          trafficLinks: null,
        },
      ],
      legs: [
        leg('access', 'Access', 'How the program reached the host is not established', {
          confidence: 'not_established',
          gapReason: 'Network flows do not show the delivery (mail attachment, download or removable media); endpoint telemetry would.',
          pivotKeys: [`src.ip=${e.source}`],
        }),
        executionLeg(e, host, (p) =>
          isLolbin(p)
            ? [
                attack(
                  'Defense Evasion',
                  p.toLowerCase().startsWith('rundll32') ? 'T1218.011' : 'T1218',
                  p.toLowerCase().startsWith('rundll32') ? 'System Binary Proxy Execution: Rundll32' : 'System Binary Proxy Execution',
                ),
              ]
            : [attack('Execution', 'T1204', 'User Execution')],
        ),
        leg('command_and_control', 'Network', `${who} checks in with ${e.destination} every ${every}`, {
          at: iso(e.firstMs),
          detail: `${m.sessions} sessions to ${dests}${names}.`,
          actors: [
            actor('source_ip', e.source, host.value.role),
            actor('destination', e.destination, dests),
            ...e.facts.fqdns.map((f) => actor('path', f, 'SNI')),
          ],
          attack: [
            attack('Command and Control', 'T1071.001', 'Application Layer Protocol: Web Protocols'),
            attack('Command and Control', 'T1573.002', 'Encrypted Channel: Asymmetric Cryptography'),
          ],
          pivotKeys: [`dst.ip=${e.facts.destinationIps[0]}`, ...e.facts.fqdns.map((f) => `tls.sni=${f}`)],
        }),
      ],
      tags: ['beacon', 'command-and-control'],
      questions: [
        {
          question: `Who was logged on to ${who} when the check-ins began (${iso(e.firstMs)})?`,
          neededData: 'Logon events or EDR sessions for the host.',
          priority: 'high',
        },
        ...(process
          ? [{ question: `What did ${process} load, and from where?`, neededData: 'Process command line and loaded modules (EDR).', priority: 'high' as const }]
          : []),
        { question: `Does any other host resolve ${list(e.facts.fqdns, 2) || e.destination}?`, neededData: 'DNS logs of the resolvers.', priority: 'medium' },
      ],
      actions: benign
        ? [{ timeframe: 'within_24h', action: `Confirm that ${e.destination} belongs to the vendor of ${list(e.facts.processes)} and record it as expected.` }]
        : [
            { timeframe: 'immediately', action: `Isolate ${who} (${e.source}) from the network.` },
            { timeframe: 'within_1h', action: `Block ${dests}${names} at the egress firewall and proxy.` },
            { timeframe: 'within_4h', action: `Capture memory and the ${process ?? 'responsible'} process image from ${who} before reimaging.` },
            { timeframe: 'within_24h', action: `Reset the credentials of the users of ${who} and search all hosts for the same destination.` },
          ],
      confidenceLimits: "Timing alone cannot tell an implant from an unusual legitimate agent; the process name and the destination's owner decide that.",
      whatWouldChange: `Evidence that ${e.destination} is a vendor service the host is meant to poll (an installed agent and a matching contract) would make this benign.`,
    };
  },
};

/** Check-ins per hour, for the timeline. */
function hourly(flows: ActivityRow[]): { atMs: number; label: string }[] {
  const hours = new Map<number, { atMs: number; n: number }>();
  for (const f of flows) {
    const h = Math.floor(Number(f.at_ms) / 3_600_000);
    const hour = hours.get(h) ?? { atMs: Number(f.at_ms), n: 0 };
    hour.n++;
    hours.set(h, hour);
  }
  return [...hours.values()].map(({ atMs, n }) => ({ atMs, label: `${n} check-in${n === 1 ? '' : 's'} in the hour from here` }));
}
