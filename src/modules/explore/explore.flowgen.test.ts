import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlowGenerator } from '../../../tools/collector/flowgen/index.js';
import { insertFlowBatch } from '../../flowstore/index.js';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { seedTree } from '../../../test/kit/seed.js';

const HOUR = 3_600_000;
const LIST = '/rest/explore/1.0/egress/organizations';

/** The reference generator's planted beacon: the cadence view shows its beat, benign metronomes theirs. */
describe('explore over generated traffic', () => {
  let t: TestApp;
  let customerId: string;
  let token: string;
  const startMs = Math.floor(Date.now() / HOUR) * HOUR - 4 * HOUR;
  const window = { start: { absolute: { date: new Date(startMs).toISOString() } }, end: { absolute: { date: new Date(startMs + 3 * HOUR).toISOString() } } };
  let incident: { destination: { org?: string }; source: { ip: string; process?: string }; params: Record<string, number | string>; flowCount: number };

  beforeAll(async () => {
    // Every generated flow names its organization, so the dataset is not needed here.
    t = await startTestApp({ env: { IP_ORG_DATASET: 'off' } });
    const tree = await seedTree(t.app);
    customerId = tree.childA.id;
    token = tree.childACaller.token;
    const gen = createFlowGenerator({
      seed: 11,
      customerId,
      startMs,
      endMs: startMs + 3 * HOUR,
      flowsPerSecond: 1,
      scenarios: [{ kind: 'beacon', intervalSecs: 45 }],
    });
    incident = gen.groundTruth()[0] as typeof incident;
    for (let batch = 0; ; batch++) {
      const flows = gen.take(5_000) as unknown as Record<string, unknown>[];
      if (!flows.length) break;
      await insertFlowBatch(t.app.flows, { customerId, nodeId: 'sensor-1', batchId: `gen-${batch}`, flows });
    }
  }, 300_000);
  afterAll(() => t.stop());

  const view = (org: string, name: string) =>
    call(t.url, 'GET', `${LIST}/${encodeURIComponent(org)}/${name}`, { token, body: { instance_ids: [customerId], ...window } });

  it('shows the beacon as a machine-steady beat at its interval from one source and process', async () => {
    const org = incident.destination.org!;
    const cadence = await view(org, 'cadence');
    expect(cadence.status).toBe(200);
    const [beat] = cadence.body.dominant_intervals;
    expect(beat.gap_secs).toBeGreaterThan(45 * 0.97);
    expect(beat.gap_secs).toBeLessThan(45 * 1.03);
    expect(beat.fraction).toBeGreaterThan(0.9);
    expect(cadence.body.steppedness).toBe(beat.fraction);
    expect(cadence.body.median_gap_secs).toBeCloseTo(45, -0.5);
    expect(cadence.body.cdf.map((p: { fraction: number }) => p.fraction)).toEqual([0.01, 0.05, 0.25, 0.5, 0.75, 0.9, 0.99]);
    expect(cadence.body.beacon.sources).toBe(1);
    expect(cadence.body.beacon.flows).toBe(incident.flowCount - 9);
    expect(cadence.body.beacon.interval_ms).toBe(45_000);
    expect(cadence.body.readout).toMatch(/^machine-steady, sessions beat (9\d|100)% at ~45s, \d+ beacon-like flows from 1 source \(~45000 ms interval\)$/);

    const reach = await view(org, 'reach');
    expect(reach.body).toMatchObject({
      source_count: 1,
      sources: [{ ip: incident.source.ip, flows: incident.flowCount }],
      processes: [{ name: incident.source.process, flows: incident.flowCount, sources: 1 }],
    });
    const access = await view(org, 'access');
    expect(access.body.tls_versions).toEqual([{ name: 'TLS 1.2', flows: incident.flowCount, bytes: expect.any(Number) }]);
    expect(access.body.ports[0]).toMatchObject({ name: 443, flows: incident.flowCount });
  });

  it("shows the EDR agents' 5-minute metronome, and browsing as irregular", async () => {
    const edr = await view('CrowdStrike, Inc.', 'cadence');
    expect(edr.body.dominant_intervals[0].gap_secs).toBeGreaterThan(290);
    expect(edr.body.dominant_intervals[0].gap_secs).toBeLessThan(310);
    expect(edr.body.readout).toMatch(/^machine-steady/);
    const list = await call(t.url, 'GET', LIST, { token, body: { instance_ids: [customerId], ...window, size: 50 } });
    const google = list.body.organizations.find((o: { name: string }) => o.name.startsWith('Google'));
    const browsing = await view(google.name, 'cadence');
    expect(browsing.body.steppedness).toBeLessThan(0.6);
    expect(list.body.organizations.find((o: { name: string }) => o.name === incident.destination.org)).toMatchObject({ sources: 1, flows: incident.flowCount });
  });
});
