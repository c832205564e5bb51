import type { DetectionStore, TimeWindow } from '../detection.store.js';
import {
  type Assessment,
  type Detector,
  type Episode,
  type Story,
  MINUTE,
  decide,
  emptyFacts,
  groupBuckets,
  groupBy,
  partition,
  margin,
  mergedContext,
  round,
  sum,
  uniq,
} from '../episode.js';
import type { HostContext } from '../host-context.js';
import { actor, attack, duration, episodeTimeline, event, executionLeg, iso, leg, list, pql, trafficLink } from '../narrative.js';
import { DEFAULT_QUIET_MS, EPISODE_GAP_MS, isScanner } from './common.js';

/** docs/detections.md "Internal scanning and lateral movement". */
export const SCAN_THRESHOLDS = {
  /** Per internal source and tumbling bucket of this length... */
  bucketSecs: 300,
  /** ...at least this many distinct internal TCP (address, port) pairs tried... */
  minDistinctTargets: 50,
  /** ...of which at least this share failed (no answer, or reset). */
  minFailedShare: 0.8,
  /** Follow-on: answered sessions to these admin services on probed hosts, within this long after the scan. */
  adminPorts: [22, 3389, 5985, 5986],
  followOnMs: 2 * 60 * MINUTE,
  followOnMinBytes: 5_000,
};

const T = SCAN_THRESHOLDS;

export const scanDetector: Detector = {
  kind: 'scan',

  async detect(store: DetectionStore, customerId: string, window: TimeWindow): Promise<Episode[]> {
    const rows = await store.scanBuckets(customerId, window, { bucketSecs: T.bucketSecs, minTargets: Math.floor(T.minDistinctTargets / 2) });
    const fires = (r: (typeof rows)[number]) => r.targets >= T.minDistinctTargets && r.failed / r.flows >= T.minFailedShare;
    const episodes: Episode[] = [];
    for (const [source, sourceRows] of groupBy(rows, (r) => r.source)) {
      for (const windows of groupBuckets(sourceRows, EPISODE_GAP_MS, fires)) {
        const group = partition(windows);
        const ctx = mergedContext(group);
        const hosts = uniq(group.flatMap((r) => r.dst_ips));
        const flows = sum(group.map((r) => Number(r.flows)));
        const failed = sum(group.map((r) => Number(r.failed)));
        const followOn = await store.followOnSessions(
          customerId,
          { fromMs: ctx.firstMs, toMs: Math.min(window.toMs, ctx.lastMs + T.followOnMs) },
          { source, hosts: hosts.slice(0, 4096), ports: T.adminPorts, minBytes: T.followOnMinBytes },
        );
        episodes.push({
          detector: 'scan',
          source,
          destination: sweptNetwork(hosts),
          firstMs: ctx.firstMs,
          lastMs: ctx.lastMs,
          measures: {
            targets: sum(group.map((r) => Number(r.targets))),
            peak_targets: Math.max(...windows.map((r) => Number(r.targets))),
            hosts: Math.max(hosts.length, ...group.map((r) => Number(r.hosts))),
            ports: uniq(group.flatMap((r) => r.ports)).length,
            flows,
            failed_share: round(failed / Math.max(1, flows), 3),
            probes_per_second: round(flows / Math.max(1, (ctx.lastMs - ctx.firstMs) / 1000), 1),
            follow_on_sessions: sum(followOn.map((f) => Number(f.sessions))),
          },
          facts: {
            ...emptyFacts(),
            sourceFqdn: ctx.sourceFqdn,
            processes: ctx.processes,
            observedProcesses: ctx.observedProcesses,
            destinationIps: hosts,
            ports: uniq(group.flatMap((r) => r.ports)).sort((a, b) => a - b),
            alertSignatures: ctx.alertSignatures,
            followOn: followOn.map((f) => ({ host: f.host, port: f.port, sessions: Number(f.sessions), firstMs: Number(f.first_ms) })),
          },
          activity: group.map((r) => ({
            atMs: Number(r.first_ms),
            label: `${r.targets} address:port pairs tried in five minutes, ${Math.round((r.failed / r.flows) * 100)}% failed`,
          })),
          nodeIds: ctx.nodeIds,
          alerts: ctx.alerts,
          host: { ip: source, fqdn: ctx.sourceFqdn },
        });
      }
    }
    return episodes;
  },

  assess(e: Episode): Assessment {
    const m = e.measures;
    const corroboration: string[] = [];
    let confidence = 0.6 + 0.2 * margin(m.peak_targets, T.minDistinctTargets, 4);
    if (m.failed_share >= 0.95) confidence += 0.03;
    const tool = e.facts.processes.find(isScanner);
    if (tool) {
      confidence += 0.1;
      corroboration.push(`${tool}, a network scanner, sent the probes`);
    }
    if (e.alerts > 0) {
      confidence += 0.04;
      corroboration.push(`the IDS alerted on ${e.alerts} probes (${list(e.facts.alertSignatures, 2)})`);
    }
    if (m.follow_on_sessions > 0) {
      confidence += 0.1;
      corroboration.push(`it then opened ${m.follow_on_sessions} admin sessions to probed hosts`);
    }
    return {
      ...decide(m.follow_on_sessions > 0 ? 90 : 70, Math.min(0.97, confidence)),
      signal: {
        volumeBytes: null,
        anomalyScore: round(margin(m.peak_targets, T.minDistinctTargets, 4), 3),
        surprise: round(Math.log2(m.peak_targets / T.minDistinctTargets), 2),
        mismatch: m.failed_share,
      },
      corroboration,
    };
  },

  quietMs: () => DEFAULT_QUIET_MS,

  story(e: Episode, a: Assessment, host: HostContext): Story {
    const m = e.measures;
    const who = host.hostname ?? e.source;
    const tool = e.facts.processes[0];
    const followed = e.facts.followOn;
    const probes = [pql.eq('src.ip', e.source), pql.eq('dst.ip', e.destination)];
    return {
      headline: followed.length ? `${who} scanned ${e.destination} and then logged in to probed hosts` : `${who} scanned ${m.hosts} hosts in ${e.destination}`,
      rationale:
        `${e.source} tried ${m.targets} internal address:port pairs (${m.hosts} hosts × ${m.ports} ports) in ${duration(e.lastMs - e.firstMs)} at ${m.probes_per_second}/s; ` +
        `${Math.round(m.failed_share * 100)}% failed (at least ${T.minDistinctTargets} pairs in five minutes with ${T.minFailedShare * 100}% failed fires).` +
        (a.corroboration.length ? ` Also: ${a.corroboration.join('; ')}.` : ''),
      known: `${who} (${e.source}) probed ${m.hosts} hosts on ${m.ports} ports between ${iso(e.firstMs)} and ${iso(e.lastMs)}.`,
      unknown: followed.length ? 'Which accounts were used for the follow-on sessions.' : 'Whether the scanner has since used what it found.',
      therefore: followed.length
        ? `Someone on ${who} is moving laterally: contain the host and the hosts it logged in to.`
        : `Reconnaissance from inside: ${who} is either an authorized scanner or a compromised host mapping the network.`,
      findings: [
        {
          headline: `${m.targets} address:port pairs tried, ${Math.round(m.failed_share * 100)}% failed`,
          observation: `Ports ${list(e.facts.ports, 10)} on ${m.hosts} hosts of ${e.destination}, ${m.probes_per_second} probes a second.`,
          significance: "A workstation uses a handful of internal services; sweeping a subnet's ports is discovery.",
          role: 'decisive',
          importance: 'high',
          rulesOut: ['ordinary client traffic', 'a misconfigured service (it would retry few targets)'],
          confirms: ['network service discovery'],
          timeline: episodeTimeline(e, 'First probe', 'Last probe'),
          trafficLinks: [trafficLink('The probes', 'Every TCP attempt from the source into the swept network.', probes, e.firstMs, e.lastMs)],
        },
        followed.length
          ? {
              headline: `${followed.length} probed host(s) then received admin sessions`,
              observation: followed.map((f) => `${f.host}:${f.port} (${f.sessions} session${f.sessions === 1 ? '' : 's'} from ${iso(f.firstMs)})`).join('; '),
              significance: 'Logging in to what a scan found is lateral movement.',
              role: 'decisive',
              importance: 'high',
              rulesOut: [],
              confirms: ['lateral movement'],
              timeline: followed.map((f) => event(f.firstMs, `Session to ${f.host}:${f.port}`)),
              trafficLinks: [
                trafficLink(
                  'The admin sessions',
                  'Answered sessions to admin services on probed hosts.',
                  [pql.eq('src.ip', e.source), pql.in('dst.ip', uniq(followed.map((f) => f.host))), pql.in('dst.port', uniq(followed.map((f) => f.port)))],
                  Math.min(...followed.map((f) => f.firstMs)),
                  e.lastMs + T.followOnMs,
                ),
              ],
            }
          : {
              headline: 'No admin sessions to probed hosts followed',
              observation: `No answered SSH, RDP or WinRM session from ${e.source} to a probed host within ${duration(T.followOnMs)} of the scan.`,
              significance: 'The scan has not (yet) been followed by lateral movement on those services.',
              role: 'context',
              importance: 'medium',
              rulesOut: ['lateral movement over SSH, RDP or WinRM so far'],
              confirms: [],
              timeline: null,
              trafficLinks: null,
            },
        ...(e.alerts > 0
          ? [
              {
                headline: `${e.alerts} IDS alerts`,
                observation: list(e.facts.alertSignatures, 4),
                significance: 'The IDS recognises the probes as scanning.',
                role: 'supporting' as const,
                importance: 'low' as const,
                rulesOut: [],
                confirms: ['scanning'],
                timeline: null,
                trafficLinks: [trafficLink('The alerted probes', null, [...probes, 'suricata.flow.alerted eq true'], e.firstMs, e.lastMs)],
              },
            ]
          : []),
      ],
      legs: [
        leg('access', 'Access', `How the scanner came to run on ${who} is not established`, {
          confidence: 'not_established',
          gapReason: 'Flows before the scan show no delivery or remote login to the source.',
          pivotKeys: [`src.ip=${e.source}`],
        }),
        executionLeg(e, host, (p) => (isScanner(p) ? [attack('Discovery', 'T1046', 'Network Service Discovery')] : [])),
        leg('lateral', 'Network', followed.length ? `${who} logged in to ${followed.length} host(s) it had probed` : `${who} swept ${e.destination}`, {
          at: iso(e.firstMs),
          detail: `${m.hosts} hosts, ports ${list(e.facts.ports, 10)}.`,
          actors: [
            actor('source_ip', e.source, host.value.role),
            actor('destination', e.destination, `${m.hosts} hosts`),
            ...(tool ? [actor('tool', tool)] : []),
          ],
          attack: [
            attack('Discovery', 'T1046', 'Network Service Discovery'),
            ...(followed.some((f) => f.port === 3389) ? [attack('Lateral Movement', 'T1021.001', 'Remote Services: Remote Desktop Protocol')] : []),
            ...(followed.some((f) => f.port === 22) ? [attack('Lateral Movement', 'T1021.004', 'Remote Services: SSH')] : []),
            ...(followed.some((f) => f.port === 5985 || f.port === 5986)
              ? [attack('Lateral Movement', 'T1021.006', 'Remote Services: Windows Remote Management')]
              : []),
          ],
          pivotKeys: [`src.ip=${e.source}`, `dst.ip=${e.destination}`],
        }),
      ],
      tags: followed.length ? ['scan', 'discovery', 'lateral-movement'] : ['scan', 'discovery'],
      questions: [
        {
          question: `Is ${who} an approved vulnerability scanner, or was a scan scheduled at ${iso(e.firstMs)}?`,
          neededData: "The asset inventory and the security team's scan calendar.",
          priority: 'high',
        },
        { question: `Who ran ${tool ?? 'the scanner'} on ${who}?`, neededData: 'Process creation and logon events of the host.', priority: 'high' },
      ],
      actions: [
        { timeframe: 'within_1h', action: `Confirm with the owner of ${who} whether the scan was sanctioned; if not, isolate it.` },
        { timeframe: 'within_4h', action: `Review authentication logs of the ${m.hosts} probed hosts for logons from ${e.source}.` },
        { timeframe: 'within_24h', action: `Restrict which hosts may reach admin ports in ${e.destination}.` },
      ],
      confidenceLimits: 'Authorized vulnerability scanners produce the same pattern; only the asset inventory can tell them apart.',
      whatWouldChange: `${who} being a registered scanner with a scan scheduled for this time would make this benign.`,
    };
  },
};

/** The /24 most of the targets are in, else the smallest block holding them all (down to /8). */
export function sweptNetwork(hosts: string[]): string {
  const v4 = hosts.map(ipv4).filter((n): n is number => n !== undefined);
  if (v4.length === 0) return hosts[0] ?? 'unknown';
  const by24 = groupBy(v4, (n) => String(n >>> 8));
  const [top, members] = [...by24].sort((a, b) => b[1].length - a[1].length)[0];
  if (members.length >= 0.8 * v4.length) return `${dotted(Number(top) * 256)}/24`;
  let prefix = 24;
  while (prefix > 8 && new Set(v4.map((n) => n >>> (32 - prefix))).size > 1) prefix--;
  return `${dotted(((v4[0] >>> (32 - prefix)) << (32 - prefix)) >>> 0)}/${prefix}`;
}

function ipv4(ip: string): number | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  return m ? ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0 : undefined;
}

const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
