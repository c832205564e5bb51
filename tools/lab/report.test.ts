// What the lab prints under a missed attack: the flows the server holds for it, per sensor.
import { describe, expect, it } from 'vitest';
import { formatReport, type LabReport } from './report.js';

const beacon = { detector: 'beacon', sourceHost: 'ws1', source: '10.10.0.11', destination: 'Updates CDN' } as const;
const bruteforce = { detector: 'bruteforce', sourceHost: 'ws2', source: '10.10.0.12', destination: '10.10.0.20' } as const;

const report = (outcomes: LabReport['outcomes']): LabReport & { sensors: [] } => ({ stored: {}, found: [], outcomes, unexpected: [], sensors: [] });

describe('formatReport', () => {
  it("lists a missed beacon's flows per sensor with the seconds between their starts", () => {
    const text = formatReport(
      report([
        {
          expected: beacon,
          matches: [],
          traffic: [
            { sensor: 'packet (router)', address: '203.0.113.80', startsMs: [0, 11_200, 11_500, 22_000] },
            { sensor: 'ipfix (127.0.0.1)', address: '203.0.113.80', startsMs: [0] },
          ],
        },
      ]),
    );
    expect(text).toContain('beacon     ws1 (10.10.0.11) → Updates CDN: MISSED\n');
    expect(text).toContain('  4 packet (router) flows to 203.0.113.80, gaps (s): 11.2 0.3 10.5\n');
    expect(text).toContain('  1 ipfix (127.0.0.1) flows to 203.0.113.80\n');
  });

  it('sums up a conversation of more than 40 flows by its span', () => {
    const startsMs = Array.from({ length: 41 }, (_, i) => i * 3_000);
    const text = formatReport(report([{ expected: bruteforce, matches: [], traffic: [{ sensor: 'packet (router)', address: '10.10.0.20', startsMs }] }]));
    expect(text).toContain('  41 packet (router) flows to 10.10.0.20, over 120 s\n');
  });
});
