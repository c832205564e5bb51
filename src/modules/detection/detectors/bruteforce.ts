import type { BruteforceRow, DetectionStore, TimeWindow } from '../detection.store.js';
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
import type { HostContext } from '../host-context.js';
import { actor, attack, duration, episodeTimeline, executionLeg, iso, leg, list, pql, trafficLink } from '../narrative.js';
import type { AttackRef } from '../../investigations/investigation.model.js';
import { DEFAULT_QUIET_MS, EPISODE_GAP_MS, isLolbin, isPasswordGuesser } from './common.js';

/** docs/detections.md "Brute force against a service". */
export const BRUTEFORCE_THRESHOLDS = {
  /** Per (source, internal address, login port) and tumbling bucket of this length... */
  bucketSecs: 600,
  /** ...on these login services (SSH, RDP, SMB, WinRM, FTP, Telnet)... */
  ports: [22, 3389, 445, 5985, 5986, 21, 23],
  /** ...at least this many attempts, an attempt being a session at most this long and this large. */
  minAttempts: 100,
  maxAttemptSecs: 10,
  maxAttemptBytes: 20 * 1024,
};

const T = BRUTEFORCE_THRESHOLDS;

const SERVICES: Record<number, { name: string; lateral: AttackRef | null }> = {
  22: { name: 'SSH', lateral: { tactic: 'Lateral Movement', techniqueId: 'T1021.004', technique: 'Remote Services: SSH' } },
  3389: { name: 'RDP', lateral: { tactic: 'Lateral Movement', techniqueId: 'T1021.001', technique: 'Remote Services: Remote Desktop Protocol' } },
  445: { name: 'SMB', lateral: { tactic: 'Lateral Movement', techniqueId: 'T1021.002', technique: 'Remote Services: SMB/Windows Admin Shares' } },
  5985: { name: 'WinRM', lateral: { tactic: 'Lateral Movement', techniqueId: 'T1021.006', technique: 'Remote Services: Windows Remote Management' } },
  5986: { name: 'WinRM', lateral: { tactic: 'Lateral Movement', techniqueId: 'T1021.006', technique: 'Remote Services: Windows Remote Management' } },
  21: { name: 'FTP', lateral: null },
  23: { name: 'Telnet', lateral: null },
};

export const bruteforceDetector: Detector = {
  kind: 'bruteforce',

  async detect(store: DetectionStore, customerId: string, window: TimeWindow): Promise<Episode[]> {
    const rows = await store.bruteforceBuckets(customerId, window, {
      bucketSecs: T.bucketSecs,
      ports: T.ports,
      maxAttemptSecs: T.maxAttemptSecs,
      maxAttemptBytes: T.maxAttemptBytes,
      minAttempts: Math.floor(T.minAttempts / 5),
    });
    const episodes: Episode[] = [];
    for (const subject of groupBy(rows, (r) => `${r.source}|${r.target}|${r.port}`).values()) {
      for (const windows of groupBuckets(subject, EPISODE_GAP_MS, (r) => r.attempts >= T.minAttempts)) episodes.push(toEpisode(windows));
    }
    return episodes;
  },

  assess(e: Episode): Assessment {
    const m = e.measures;
    const corroboration: string[] = [];
    let confidence = 0.65 + 0.2 * margin(m.peak_attempts, T.minAttempts, 4);
    if (!e.facts.sourceExternal) {
      confidence += 0.1;
      corroboration.push('the source is an internal host, where nothing legitimate guesses passwords');
    }
    if (m.threat_flows > 0) {
      confidence += 0.1;
      corroboration.push(`threat intelligence lists the source (${list(e.facts.threatFeeds, 3) || 'feed'})`);
    }
    if (e.alerts > 0) {
      confidence += 0.04;
      corroboration.push(`the IDS alerted ${e.alerts} times (${list(e.facts.alertSignatures, 2)})`);
    }
    const tool = e.facts.processes.find((p) => isPasswordGuesser(p) || isLolbin(p));
    if (tool) {
      confidence += 0.08;
      corroboration.push(`${tool} opened the sessions`);
    }
    return {
      ...decide(e.facts.sourceExternal ? 75 : 85, Math.min(0.97, confidence)),
      signal: {
        volumeBytes: m.bytes,
        anomalyScore: round(margin(m.peak_attempts, T.minAttempts, 4), 3),
        surprise: round(Math.log2(m.peak_attempts / T.minAttempts), 2),
        mismatch: round(m.attempts_per_minute, 1),
      },
      corroboration,
    };
  },

  quietMs: () => DEFAULT_QUIET_MS,

  story(e: Episode, a: Assessment, host: HostContext): Story {
    const m = e.measures;
    const port = e.facts.ports[0];
    const service = SERVICES[port]?.name ?? `port ${port}`;
    const external = e.facts.sourceExternal;
    const target = e.facts.targetFqdn?.split('.')[0] ?? e.destination;
    const attacker = external
      ? `${e.source}${e.facts.sourceOrg ? ` (${e.facts.sourceOrg}, ${e.facts.sourceCountry ?? '?'})` : ''}`
      : (host.hostname ?? e.source);
    const tool = e.facts.processes[0];
    const sessions = [pql.eq('src.ip', e.source), pql.eq('dst.ip', e.destination), pql.eq('dst.port', port)];
    const lateral = SERVICES[port]?.lateral;
    return {
      headline: `${m.attempts} ${service} login attempts on ${target} from ${external ? e.source : attacker}`,
      rationale:
        `${m.attempts} short sessions (≤ ${T.maxAttemptSecs} s, ≤ ${T.maxAttemptBytes / 1024} KiB) from ${e.source} to ${e.destination}:${port} in ${duration(e.lastMs - e.firstMs)}, ` +
        `up to ${m.peak_attempts} in ten minutes (${T.minAttempts} fires).` +
        (a.corroboration.length ? ` Also: ${a.corroboration.join('; ')}.` : ''),
      known: `${attacker} tried to log in to ${service} on ${target} (${e.destination}) ${m.attempts} times between ${iso(e.firstMs)} and ${iso(e.lastMs)}.`,
      unknown: 'Whether any attempt succeeded, and which accounts were tried: flows do not carry authentication results.',
      therefore: external
        ? `An internet password-guessing campaign against an exposed ${service} service: check ${target}'s logs for a success and block the source.`
        : `${host.hostname ?? e.source} is guessing passwords inside the network, which means it is compromised or misused: contain it.`,
      findings: [
        {
          headline: `${m.attempts} short ${service} sessions`,
          observation: `${m.sessions} sessions, ${m.attempts} of them short and small (a failed login), peaking at ${m.peak_attempts} per ten minutes, ${m.attempts_per_minute} a minute.`,
          significance: `Real ${service} sessions are few, long and large; hundreds of tiny ones are automated guessing.`,
          role: 'decisive',
          importance: 'high',
          rulesOut: ['interactive administration', 'a monitoring probe (it would be regular and few)'],
          confirms: ['password guessing'],
          timeline: episodeTimeline(e, 'First attempt', 'Last attempt'),
          trafficLinks: [trafficLink('The login attempts', null, sessions, e.firstMs, e.lastMs)],
        },
        ...(m.threat_flows > 0
          ? [
              {
                headline: 'The source is on threat-intelligence lists',
                observation: `${m.threat_flows} flows matched indicators from ${list(e.facts.threatFeeds, 3) || 'the threat feeds'}.`,
                significance: 'The address is known for attacks elsewhere.',
                role: 'supporting' as const,
                importance: 'medium' as const,
                rulesOut: ['a legitimate user mistyping a password'],
                confirms: ['hostile source'],
                timeline: null,
                trafficLinks: [trafficLink('Everything from the source', 'Any destination.', [pql.eq('src.ip', e.source)], e.firstMs, e.lastMs)],
              },
            ]
          : []),
        {
          headline: 'Whether a login succeeded is not visible',
          observation: `A successful login would be followed by a longer session; none stands out among the ${m.sessions} sessions, but ${service} logs on ${target} are the proof.`,
          significance: 'The difference between an attempted and a successful intrusion.',
          role: 'data_gap',
          importance: 'high',
          rulesOut: [],
          confirms: [],
          timeline: null,
          trafficLinks: [
            trafficLink(
              'Longer sessions between the two',
              'Sessions over 10 s could be successful logins.',
              [...sessions, 'stats.timing.duration_secs.sum gt 10'],
              e.firstMs,
              e.lastMs,
            ),
          ],
        },
      ],
      legs: [
        external
          ? leg('access', 'Access', `${e.source} guessed ${service} passwords on ${target}`, {
              at: iso(e.firstMs),
              actors: [
                actor('source_ip', e.source, [e.facts.sourceOrg, e.facts.sourceCountry].filter(Boolean).join(', ') || null),
                actor('destination', target, `${e.destination}:${port}`),
              ],
              attack: [
                attack('Credential Access', 'T1110.001', 'Brute Force: Password Guessing'),
                attack('Initial Access', 'T1133', 'External Remote Services'),
              ],
              pivotKeys: [`src.ip=${e.source}`, `dst.ip=${e.destination}`],
            })
          : leg('access', 'Access', `How ${host.hostname ?? e.source} was taken over is not established`, {
              confidence: 'not_established',
              gapReason: 'The flows before the attempts show no delivery or remote login to the source.',
              pivotKeys: [`src.ip=${e.source}`],
            }),
        ...(external
          ? []
          : [
              executionLeg(e, host, (p) =>
                isPasswordGuesser(p) || isLolbin(p) ? [attack('Credential Access', 'T1110.001', 'Brute Force: Password Guessing')] : [],
              ),
            ]),
        leg('identity', 'Identity', 'The accounts tried are not established', {
          confidence: 'not_established',
          gapReason: `Account names travel inside the encrypted ${service} handshake; ${target}'s authentication log has them.`,
          pivotKeys: [`dst.ip=${e.destination}`],
        }),
        ...(external
          ? []
          : [
              leg('lateral', 'Network', `${host.hostname ?? e.source} attacked ${service} on ${target}`, {
                at: iso(e.firstMs),
                actors: [
                  actor('source_ip', e.source, host.value.role),
                  actor('destination', target, `${e.destination}:${port}`),
                  ...(tool ? [actor('tool', tool)] : []),
                ],
                attack: [attack('Credential Access', 'T1110.001', 'Brute Force: Password Guessing'), ...(lateral ? [lateral] : [])],
                pivotKeys: [`src.ip=${e.source}`, `dst.ip=${e.destination}`, `dst.port=${port}`],
              }),
            ]),
      ],
      tags: external ? ['bruteforce', 'credential-access', 'external'] : ['bruteforce', 'credential-access', 'lateral-movement'],
      questions: [
        {
          question: `Did any ${service} login on ${target} succeed between ${iso(e.firstMs)} and ${iso(e.lastMs)}?`,
          neededData: `${service} authentication logs of ${target}.`,
          priority: 'highest',
        },
        { question: 'Which accounts were targeted, and do they exist?', neededData: `${service} authentication logs of ${target}.`, priority: 'high' },
      ],
      actions: [
        { timeframe: 'immediately', action: external ? `Block ${e.source} at the perimeter.` : `Isolate ${host.hostname ?? e.source} (${e.source}).` },
        {
          timeframe: 'within_1h',
          action: `Check ${target}'s authentication log for a success from ${e.source}; if one exists, treat ${target} as compromised.`,
        },
        {
          timeframe: 'within_24h',
          action: external
            ? `Put ${service} on ${target} behind a VPN or require keys/MFA; enable rate limiting.`
            : `Reset credentials used on ${host.hostname ?? e.source} and review its recent logons.`,
        },
      ],
      confidenceLimits:
        'Flows cannot show authentication results; a misconfigured client retrying a wrong password looks similar, though it rarely reaches this rate.',
      whatWouldChange: 'A sanctioned password audit from this source, or the attempts being one misconfigured service account, would make this benign.',
    };
  },
};

function toEpisode(windows: BruteforceRow[]): Episode {
  const group = partition(windows);
  const r = group[0];
  const ctx = mergedContext(group);
  const attempts = sum(group.map((g) => Number(g.attempts)));
  const minutes = Math.max(1, (ctx.lastMs - ctx.firstMs) / 60_000);
  return {
    detector: 'bruteforce',
    source: r.source,
    destination: r.target,
    firstMs: ctx.firstMs,
    lastMs: ctx.lastMs,
    measures: {
      attempts,
      sessions: sum(group.map((g) => Number(g.sessions))),
      peak_attempts: Math.max(...windows.map((g) => Number(g.attempts))),
      attempts_per_minute: round(attempts / minutes, 1),
      threat_flows: sum(group.map((g) => Number(g.threat_flows))),
      bytes: sum(group.map((g) => Number(g.bytes))),
    },
    facts: {
      ...emptyFacts(),
      sourceExternal: Boolean(r.source_external),
      sourceFqdn: ctx.sourceFqdn,
      sourceOrg: r.source_org,
      sourceCountry: r.source_country,
      processes: ctx.processes,
      observedProcesses: ctx.observedProcesses,
      destinationIps: [r.target],
      ports: [Number(r.port)],
      alertSignatures: ctx.alertSignatures,
      threatFeeds: uniq(group.flatMap((g) => g.threat_feeds)),
      targetFqdn: r.target_fqdn,
      serviceProcesses: uniq(group.flatMap((g) => g.service_processes)),
    },
    activity: group.map((g) => ({ atMs: Number(g.first_ms), label: `${g.attempts} attempts in ten minutes` })),
    nodeIds: ctx.nodeIds,
    alerts: ctx.alerts,
    host: r.source_external ? { ip: r.target, fqdn: r.target_fqdn } : { ip: r.source, fqdn: ctx.sourceFqdn },
  };
}
