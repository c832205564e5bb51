import type { ActivityRow, DetectionStore, TimeWindow } from '../detection.store.js';
import {
  type Assessment,
  type Detector,
  type Episode,
  type Story,
  MiB,
  MINUTE,
  decide,
  emptyFacts,
  margin,
  observedProcesses,
  round,
  uniq,
} from '../episode.js';
import type { HostContext } from '../host-context.js';
import { actor, attack, bytes, duration, episodeTimeline, executionLeg, iso, leg, list, pql, trafficLink } from '../narrative.js';
import { DEFAULT_QUIET_MS, RARITY_BASELINE_MS, isTransferTool } from './common.js';

/** docs/detections.md "Bulk exfiltration". */
export const EXFIL_THRESHOLDS = {
  /** Per (internal source, external organization) over the run's window: at least this uploaded... */
  minUploadBytes: 200 * MiB,
  /** ...at least this many times what came back... */
  minUploadToDownload: 10,
  /** ...to an organization at most this many internal hosts reached over the rarity baseline. */
  maxOrgSources: 2,
  /** Mean payload entropy (bits per byte) from which the data is called encrypted or compressed. */
  highEntropy: 7.5,
};

const T = EXFIL_THRESHOLDS;

export const exfilDetector: Detector = {
  kind: 'exfil',

  async detect(store: DetectionStore, customerId: string, window: TimeWindow): Promise<Episode[]> {
    const rows = await store.exfilCandidates(customerId, window, { minUploadBytes: T.minUploadBytes / 2, minUploadToDownload: T.minUploadToDownload / 2 });
    const heavy = rows.filter((r) => r.up >= T.minUploadBytes && r.up >= T.minUploadToDownload * Math.max(1, r.down));
    const baseline = { fromMs: window.toMs - RARITY_BASELINE_MS, toMs: window.toMs };
    const reach = await store.orgReach(customerId, uniq(heavy.map((r) => r.destination)), baseline);
    const episodes: Episode[] = [];
    for (const r of heavy) {
      const seen = reach.get(r.destination);
      const sources = seen?.sources ?? 1;
      if (sources > T.maxOrgSources) continue;
      const flows = await store.pairActivity(customerId, window, { source: r.source, org: r.destination, limit: 5000 });
      episodes.push({
        detector: 'exfil',
        source: r.source,
        destination: r.destination,
        firstMs: Number(r.first_ms),
        lastMs: Number(r.last_ms),
        measures: {
          upload_bytes: Number(r.up),
          download_bytes: Number(r.down),
          upload_ratio: round(r.up / Math.max(1, r.down), 1),
          flows: Number(r.flows),
          org_sources: sources,
          // New: nothing went to this organization in the baseline before the episode began.
          new_destination: seen && Number(seen.first_seen_ms) < Number(r.first_ms) ? 0 : 1,
          payload_entropy: round(r.entropy ?? 0, 2),
          lanes: lanes(flows),
          largest_flow_bytes: Math.max(0, ...flows.map((f) => f.up)),
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
        activity: perFiveMinutes(flows),
        nodeIds: r.node_ids,
        alerts: Number(r.alerts),
        host: { ip: r.source, fqdn: r.source_fqdn },
      });
    }
    return episodes;
  },

  assess(e: Episode): Assessment {
    const m = e.measures;
    const corroboration: string[] = [];
    let confidence = 0.6 + 0.15 * margin(m.upload_bytes, T.minUploadBytes, 4);
    if (m.new_destination) {
      confidence += 0.1;
      corroboration.push('nothing had gone to this organization before in the last 24 h');
    }
    if (m.payload_entropy >= T.highEntropy) {
      confidence += 0.04;
      corroboration.push(`the payload is encrypted or compressed (${m.payload_entropy} bits per byte)`);
    }
    if (m.lanes >= 3) {
      confidence += 0.04;
      corroboration.push(`${m.lanes} transfers ran in parallel, as bulk-copy tools do`);
    }
    const tool = e.facts.processes.find(isTransferTool);
    if (tool) {
      confidence += 0.08;
      corroboration.push(`${tool}, a bulk transfer tool, sent it`);
    }
    return {
      ...decide(95, Math.min(0.97, confidence)),
      signal: {
        volumeBytes: m.upload_bytes,
        anomalyScore: round(margin(m.upload_bytes, T.minUploadBytes, 4), 3),
        surprise: round(Math.log2(m.upload_bytes / T.minUploadBytes), 2),
        mismatch: round(Math.log10(m.upload_ratio), 2),
      },
      corroboration,
    };
  },

  quietMs: () => DEFAULT_QUIET_MS,

  story(e: Episode, a: Assessment, host: HostContext): Story {
    const m = e.measures;
    const who = host.hostname ?? e.source;
    const up = bytes(m.upload_bytes);
    const dests = list(e.facts.destinationIps);
    const names = e.facts.fqdns.length ? ` (${list(e.facts.fqdns, 3)})` : '';
    const tool = e.facts.processes[0];
    const conditions = [pql.eq('src.ip', e.source), pql.in('dst.ip', e.facts.destinationIps)];
    return {
      headline: `${who} uploaded ${up} to ${e.destination}`,
      rationale:
        `${e.source} sent ${up} to ${dests}${names} in ${duration(e.lastMs - e.firstMs)} and received ${bytes(m.download_bytes)} (${m.upload_ratio}:1); ` +
        `${m.org_sources} internal host(s) reached ${e.destination} in the last 24 h (at least ${bytes(T.minUploadBytes)} at ${T.minUploadToDownload}:1 to a destination reached by at most ${T.maxOrgSources} hosts fires).` +
        (a.corroboration.length ? ` Also: ${a.corroboration.join('; ')}.` : ''),
      known: `${up} left ${who} for ${e.destination} between ${iso(e.firstMs)} and ${iso(e.lastMs)}, almost nothing came back, and ${m.new_destination ? 'the destination was new' : 'few hosts ever use the destination'}.`,
      unknown: 'Which files were sent, and whether the destination account belongs to the organisation.',
      therefore: `Assume data has left: find out what ${who} holds, contain it, and start the breach-notification clock.`,
      findings: [
        {
          headline: `${up} uploaded in ${duration(e.lastMs - e.firstMs)}`,
          observation: `${m.flows} flows to ${dests} on port ${list(e.facts.ports)}; ${up} up, ${bytes(m.download_bytes)} down; largest flow ${bytes(m.largest_flow_bytes)}; up to ${m.lanes} at once.`,
          significance: 'An upload this size to a destination the organisation does not use is the signature of bulk theft.',
          role: 'decisive',
          importance: 'high',
          rulesOut: ['browsing', 'streaming', 'software updates (they download)'],
          confirms: ['bulk upload'],
          timeline: episodeTimeline(e, 'Upload starts', 'Last upload flow'),
          trafficLinks: [trafficLink('The upload', 'Every flow of the transfer.', conditions, e.firstMs, e.lastMs)],
        },
        {
          headline: m.new_destination ? `${e.destination} was never contacted before` : `${e.destination} is reached by ${m.org_sources} host(s)`,
          observation: `In the last 24 h ${m.org_sources} internal host(s) reached ${e.destination}${e.facts.tlsVersions.length ? `, over ${list(e.facts.tlsVersions)}` : ''}.`,
          significance: 'Sanctioned backup and sync services are used by many hosts; this destination is not one of them.',
          role: 'supporting',
          importance: 'high',
          rulesOut: ["the organisation's own backup or sync service"],
          confirms: [],
          timeline: null,
          trafficLinks: [trafficLink(`All traffic to ${e.destination}`, 'Any internal host.', [pql.in('dst.ip', e.facts.destinationIps)], e.firstMs, e.lastMs)],
        },
        {
          headline: `Payload entropy ${m.payload_entropy} bits per byte`,
          observation: m.payload_entropy >= T.highEntropy ? 'The data is encrypted or compressed end to end.' : 'The payload is not uniformly encrypted.',
          significance: 'Archives and encrypted transfers hide what was taken; the content cannot be recovered from the network.',
          role: 'data_gap',
          importance: 'medium',
          rulesOut: [],
          confirms: [],
          timeline: null,
          trafficLinks: null,
        },
      ],
      legs: [
        leg('access', 'Access', 'How the sender got access to the host is not established', {
          confidence: 'not_established',
          gapReason: 'No authentication or delivery is visible in the flows before the upload.',
          pivotKeys: [`src.ip=${e.source}`],
        }),
        executionLeg(e, host, (p) =>
          isTransferTool(p) ? [attack('Exfiltration', 'T1567.002', 'Exfiltration Over Web Service: Exfiltration to Cloud Storage')] : [],
        ),
        leg('collection', 'Collection', 'What was gathered before the upload is not established', {
          confidence: 'not_established',
          gapReason: 'File access happens on the host; flows show only what left it.',
          attack: [attack('Collection', 'T1074.001', 'Data Staged: Local Data Staging')],
        }),
        leg('exfiltration', 'Network', `${up} to ${e.destination}`, {
          at: iso(e.firstMs),
          detail: `${m.flows} flows to ${dests}${names}.`,
          actors: [actor('source_ip', e.source, host.value.role), actor('destination', e.destination, dests), ...(tool ? [actor('tool', tool)] : [])],
          attack: [
            attack('Exfiltration', 'T1048.002', 'Exfiltration Over Alternative Protocol: Exfiltration Over Asymmetric Encrypted Non-C2 Protocol'),
            ...(m.flows >= 8 ? [attack('Exfiltration', 'T1030', 'Data Transfer Size Limits')] : []),
          ],
          pivotKeys: [`dst.ip=${e.facts.destinationIps[0]}`, ...e.facts.fqdns.map((f) => `tls.sni=${f}`)],
        }),
      ],
      tags: ['exfil', 'data-loss'],
      questions: [
        {
          question: `Which files did ${tool ?? 'the sending process'} read on ${who} before ${iso(e.firstMs)}?`,
          neededData: 'File-access or EDR telemetry of the host.',
          priority: 'high',
        },
        {
          question: `Whose account at ${e.destination} received the data?`,
          neededData: "The provider's abuse desk or the tool's configuration on the host.",
          priority: 'medium',
        },
      ],
      actions: [
        { timeframe: 'immediately', action: `Block ${dests}${names} at the egress firewall.` },
        { timeframe: 'within_1h', action: `Isolate ${who} (${e.source}) and preserve the ${tool ?? 'sending'} configuration and history.` },
        { timeframe: 'within_4h', action: 'Identify the data sent and its owners; involve legal for breach notification.' },
        { timeframe: 'within_24h', action: 'Review egress rules for bulk uploads to hosting providers.' },
      ],
      confidenceLimits: 'Flows show volume and destination, not content: a sanctioned migration to a new provider would look the same.',
      whatWouldChange: `A change record for a transfer from ${who} to ${e.destination} would make this benign.`,
    };
  },
};

/** Most transfers in flight at once. */
function lanes(flows: ActivityRow[]): number {
  const edges = flows.flatMap((f) => [
    [Number(f.at_ms), 1],
    [Number(f.at_ms) + f.secs * 1000, -1],
  ]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (open += d));
  return most;
}

/** Uploaded bytes per five minutes, for the timeline. */
function perFiveMinutes(flows: ActivityRow[]): { atMs: number; label: string }[] {
  const slots = new Map<number, { atMs: number; up: number; n: number }>();
  for (const f of flows) {
    const k = Math.floor(Number(f.at_ms) / (5 * MINUTE));
    const slot = slots.get(k) ?? { atMs: Number(f.at_ms), up: 0, n: 0 };
    slot.up += f.up;
    slot.n++;
    slots.set(k, slot);
  }
  return [...slots.values()].map((s) => ({ atMs: s.atMs, label: `${bytes(s.up)} uploaded in ${s.n} flow${s.n === 1 ? '' : 's'} over five minutes` }));
}
