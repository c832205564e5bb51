import type { DetectionStore, DnsRow, TimeWindow } from '../detection.store.js';
import {
  type Assessment,
  type Detector,
  type Episode,
  type Story,
  decide,
  emptyFacts,
  groupBuckets,
  groupBy,
  margin,
  mergedContext,
  partition,
  round,
  sum,
  uniq,
} from '../episode.js';
import { filterable } from '../flow-fields.js';
import type { HostContext } from '../host-context.js';
import { actor, attack, bytes, duration, episodeTimeline, executionLeg, iso, leg, list, pql, trafficLink } from '../narrative.js';
import { DEFAULT_QUIET_MS, EPISODE_GAP_MS, isTunnelTool } from './common.js';

/** docs/detections.md "DNS tunnelling". */
export const DNS_TUNNEL_THRESHOLDS = {
  /** Per (internal source, registered domain) and tumbling bucket of this length... */
  bucketSecs: 600,
  /** ...at least this many questions... */
  minQueries: 200,
  /** ...for at least this many distinct names... */
  minUniqueNames: 100,
  /** ...whose labels left of the registered domain average at least this many characters. */
  minMeanLabelLength: 30,
};

const T = DNS_TUNNEL_THRESHOLDS;

const meanLabel = (rows: DnsRow[]) => sum(rows.map((r) => Number(r.label_chars))) / Math.max(1, sum(rows.map((r) => Number(r.label_count))));
const fires = (r: DnsRow) => r.queries >= T.minQueries && r.names >= T.minUniqueNames && meanLabel([r]) >= T.minMeanLabelLength;

export const dnsTunnelDetector: Detector = {
  kind: 'dns-tunnel',

  async detect(store: DetectionStore, customerId: string, window: TimeWindow): Promise<Episode[]> {
    const rows = await store.dnsBuckets(customerId, window, { bucketSecs: T.bucketSecs, minQueries: Math.floor(T.minQueries / 2) });
    const subjects = groupBy(rows, (r) => `${r.source}|${r.domain}`);
    // A resolver forwarding a client's questions asks the same names itself: when a source is the
    // resolver of another source for the same domain, the questions are that client's, not its own.
    const forwarders = new Map<string, string[]>();
    for (const list of subjects.values()) {
      for (const resolver of uniq(list.flatMap((r) => r.resolvers))) {
        const key = `${resolver}|${list[0].domain}`;
        if (subjects.has(key)) forwarders.set(key, uniq(subjects.get(key)!.flatMap((r) => r.resolvers)));
      }
    }
    const episodes: Episode[] = [];
    for (const [key, list] of subjects) {
      if (forwarders.has(key)) continue;
      for (const windows of groupBuckets(list, EPISODE_GAP_MS, fires)) {
        const group = partition(windows);
        const ctx = mergedContext(group);
        const resolvers = uniq(group.flatMap((r) => r.resolvers));
        const upstream = uniq(resolvers.flatMap((r) => forwarders.get(`${r}|${group[0].domain}`) ?? []));
        const queries = sum(group.map((r) => Number(r.queries)));
        const names = sum(group.map((r) => Number(r.names)));
        episodes.push({
          detector: 'dns-tunnel',
          source: group[0].source,
          destination: group[0].domain,
          firstMs: ctx.firstMs,
          lastMs: ctx.lastMs,
          measures: {
            queries,
            unique_names: names,
            unique_share: round(names / Math.max(1, queries), 3),
            mean_label_length: round(meanLabel(group), 1),
            peak_queries: Math.max(...windows.map((r) => Number(r.queries))),
            upload_bytes: sum(group.map((r) => Number(r.up))),
            download_bytes: sum(group.map((r) => Number(r.down))),
          },
          facts: {
            ...emptyFacts(),
            sourceFqdn: ctx.sourceFqdn,
            processes: ctx.processes,
            observedProcesses: ctx.observedProcesses,
            destinationIps: upstream.length ? upstream : resolvers,
            ports: [53],
            fqdns: [group[0].domain],
            alertSignatures: ctx.alertSignatures,
            resolvers,
            rrtypes: uniq(group.flatMap((r) => r.rrtypes)),
          },
          activity: group.map((r) => ({ atMs: Number(r.first_ms), label: `${r.queries} questions for ${r.names} names in ten minutes` })),
          nodeIds: ctx.nodeIds,
          alerts: ctx.alerts,
          host: { ip: group[0].source, fqdn: ctx.sourceFqdn },
        });
      }
    }
    return episodes;
  },

  assess(e: Episode): Assessment {
    const m = e.measures;
    const corroboration: string[] = [];
    let confidence = 0.65 + 0.1 * margin(m.mean_label_length, T.minMeanLabelLength, 2) + 0.1 * margin(m.unique_names, T.minUniqueNames, 8);
    const odd = e.facts.rrtypes.filter((t) => t === 'TXT' || t === 'NULL');
    if (odd.length) {
      confidence += 0.05;
      corroboration.push(`it asks for ${list(odd)} records, which carry arbitrary data back`);
    }
    const tool = e.facts.processes.find(isTunnelTool);
    if (tool) {
      confidence += 0.08;
      corroboration.push(`${tool} asked the questions`);
    }
    return {
      ...decide(85, Math.min(0.97, confidence)),
      signal: {
        volumeBytes: m.upload_bytes + m.download_bytes,
        anomalyScore: round(margin(m.mean_label_length, T.minMeanLabelLength, 2), 3),
        surprise: round(Math.log2(m.unique_names / T.minUniqueNames), 2),
        mismatch: round(m.mean_label_length / T.minMeanLabelLength, 2),
      },
      corroboration,
    };
  },

  quietMs: () => DEFAULT_QUIET_MS,

  story(e: Episode, a: Assessment, host: HostContext): Story {
    const m = e.measures;
    const who = host.hostname ?? e.source;
    const resolvers = list(e.facts.resolvers);
    const upstream = e.facts.destinationIps.filter((ip) => !e.facts.resolvers.includes(ip));
    const names = filterable('dns.rrname') ? [pql.wi('dns.rrname', `*.${e.destination}`)] : [];
    const questions = [pql.eq('src.ip', e.source), pql.eq('dst.port', 53), ...names];
    return {
      headline: `${who} tunnels data through DNS names under ${e.destination}`,
      rationale:
        `${e.source} asked ${m.queries} questions for ${m.unique_names} distinct names under ${e.destination} in ${duration(e.lastMs - e.firstMs)}, ` +
        `with labels averaging ${m.mean_label_length} characters (at least ${T.minQueries} questions, ${T.minUniqueNames} names and ${T.minMeanLabelLength}-character labels in ten minutes fires).` +
        (a.corroboration.length ? ` Also: ${a.corroboration.join('; ')}.` : ''),
      known: `${who} (${e.source}) sent ${bytes(m.upload_bytes)} in ${m.queries} DNS questions with long, never-repeating names under ${e.destination}${upstream.length ? `, which ${resolvers} forwarded to ${list(upstream)}` : ''}.`,
      unknown: "What the encoded names contain, and who controls the domain's name servers.",
      therefore: `Treat ${who} as compromised and the domain as an attacker channel: DNS is carrying data that ordinary lookups never would.`,
      findings: [
        {
          headline: `${m.unique_names} unique names, labels of ${m.mean_label_length} characters`,
          observation: `${m.queries} questions (${Math.round(m.unique_share * 100)}% unique) for ${list(e.facts.rrtypes)} records under ${e.destination}, peaking at ${m.peak_queries} in ten minutes.`,
          significance:
            'Ordinary names come from a small catalogue and are short; encoded data is long, random and never repeats, so every question misses the cache.',
          role: 'decisive',
          importance: 'high',
          rulesOut: ['ordinary name resolution', 'CDN or telemetry lookups (they repeat)'],
          confirms: ['data encoded in DNS names'],
          timeline: episodeTimeline(e, 'First encoded question', 'Last encoded question'),
          trafficLinks: [
            trafficLink('The questions', names.length ? null : 'All DNS from the source (the name is not filterable here).', questions, e.firstMs, e.lastMs),
          ],
        },
        {
          headline: upstream.length ? `Forwarded by ${resolvers} to ${list(upstream)}` : `Sent to ${resolvers}`,
          observation: upstream.length
            ? `Each question missed the resolver's cache and was forwarded to the domain's name server at ${list(upstream)}.`
            : `The questions went straight to ${resolvers}.`,
          significance: 'The internal resolver relays the data out; blocking the domain there cuts the channel.',
          role: 'supporting',
          importance: 'medium',
          rulesOut: [],
          confirms: ['data leaves through the resolver'],
          timeline: null,
          trafficLinks: upstream.length
            ? [trafficLink('The forwarded questions', null, [pql.in('dst.ip', upstream), pql.eq('dst.port', 53)], e.firstMs, e.lastMs)]
            : null,
        },
      ],
      legs: [
        leg('access', 'Access', `How the tunnel client reached ${who} is not established`, {
          confidence: 'not_established',
          gapReason: 'No delivery is visible in the flows before the tunnel.',
          pivotKeys: [`src.ip=${e.source}`],
        }),
        executionLeg(e, host, (p) =>
          p.toLowerCase().startsWith('powershell') ? [attack('Execution', 'T1059.001', 'Command and Scripting Interpreter: PowerShell')] : [],
        ),
        leg('exfiltration', 'Network', `${who} → ${resolvers}${upstream.length ? ` → ${list(upstream)}` : ''} under ${e.destination}`, {
          at: iso(e.firstMs),
          actors: [
            actor('source_ip', e.source, host.value.role),
            ...e.facts.resolvers.map((r) => actor('path', r, 'resolver')),
            actor('destination', e.destination, upstream.length ? `name server ${list(upstream)}` : null),
          ],
          attack: [
            attack('Command and Control', 'T1071.004', 'Application Layer Protocol: DNS'),
            attack('Command and Control', 'T1572', 'Protocol Tunneling'),
            attack('Command and Control', 'T1132.001', 'Data Encoding: Standard Encoding'),
            attack('Exfiltration', 'T1048.003', 'Exfiltration Over Alternative Protocol: Exfiltration Over Unencrypted Non-C2 Protocol'),
          ],
          pivotKeys: [`dns.rrname=*.${e.destination}`, `src.ip=${e.source}`],
        }),
      ],
      tags: ['dns-tunnel', 'exfil', 'command-and-control'],
      questions: [
        {
          question: `Which process on ${who} generated the questions, and since when is it installed?`,
          neededData: 'Process and DNS-client telemetry of the host.',
          priority: 'high',
        },
        {
          question: `Who registered ${e.destination}, and does any other host query it?`,
          neededData: "WHOIS and the resolvers' query logs.",
          priority: 'medium',
        },
      ],
      actions: [
        { timeframe: 'immediately', action: `Sinkhole ${e.destination} on the internal resolvers (${resolvers}).` },
        { timeframe: 'within_1h', action: `Isolate ${who} (${e.source}).` },
        { timeframe: 'within_24h', action: 'Allow outbound DNS only from the resolvers, and alert on long labels.' },
      ],
      confidenceLimits: 'Some security and CDN products encode data in names too; they use well-known domains and shorter labels.',
      whatWouldChange: `${e.destination} belonging to a sanctioned product that encodes telemetry in DNS would make this benign.`,
    };
  },
};
