import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { seedCaller, seedTenant } from '../../../test/kit/seed.js';
import { createFlowGenerator, type FlowGeneratorOptions, type Incident } from '../../../tools/collector/flowgen/index.js';
import { insertFlowBatch } from '../../flowstore/index.js';
import { expectedDestination } from './detection.fixtures.js';

/**
 * The reference collector's planted scenarios (tools/collector/flowgen, docs/flowgen.md) are
 * found: each planted attack yields one investigation with the right verdict and hosts, and the
 * benign traffic around them — and a day of benign traffic alone — yields none.
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const END = Math.floor(Date.now() / MINUTE) * MINUTE - MINUTE;

async function load(t: TestApp, options: FlowGeneratorOptions): Promise<Incident[]> {
  const gen = createFlowGenerator(options);
  for (let batch = 0; ; batch++) {
    const flows = gen.take(20_000);
    if (flows.length === 0) break;
    await insertFlowBatch(t.app.flows, {
      customerId: options.customerId,
      nodeId: 'node_sensor',
      batchId: `gt-${batch}`,
      flows: flows as unknown as Record<string, unknown>[],
    });
  }
  return gen.groundTruth();
}

describe("ground truth: the reference collector's planted scenarios", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { DETECTION_INTERVAL_SECONDS: '0' } });
  });
  afterAll(() => t.stop());

  it('yields one investigation per planted attack, malicious, with its hosts, and nothing else', async () => {
    const tenant = await seedTenant(t.app);
    const startMs = END - 6 * HOUR;
    const incidents = await load(t, {
      seed: 11,
      customerId: tenant.id,
      startMs,
      endMs: END,
      flowsPerSecond: 1,
      scenarios: ['beacon', 'exfil', 'scan', 'bruteforce', 'dns-tunnel', { kind: 'bruteforce', service: 'rdp' }, { kind: 'bruteforce', service: 'smb' }],
    });
    expect(incidents).toHaveLength(7);

    const result = await t.app.services.detection.runNow(tenant.id, { window: { fromMs: startMs, toMs: END }, nowMs: END });
    expect(result.failed).toEqual([]);
    const found = result.opened.map((o) => ({ detector: o.detector, source: o.source, destination: o.destination, disposition: o.disposition }));
    const expected = incidents.map((i) => ({ detector: i.kind, source: i.source.ip, destination: expectedDestination(i), disposition: 'malicious' }));
    expect(found).toHaveLength(expected.length);
    expect(found).toEqual(expect.arrayContaining(expected));

    // Each one's window covers the planted one.
    for (const incident of incidents) {
      const opened = result.opened.find((o) => o.detector === incident.kind && o.source === incident.source.ip)!;
      expect(Date.parse(opened.first_activity_at)).toBeLessThanOrEqual(incident.window.startMs + 10 * MINUTE);
      expect(Date.parse(opened.last_activity_at)).toBeGreaterThanOrEqual(incident.window.endMs - MINUTE);
    }

    // Re-running over the same data changes nothing.
    const again = await t.app.services.detection.runNow(tenant.id, { window: { fromMs: startMs, toMs: END }, nowMs: END });
    expect([again.opened, again.updated, again.failed]).toEqual([[], [], []]);
    expect(await t.app.db.prisma.investigation.count({ where: { customerId: tenant.id } })).toBe(incidents.length);

    // And every one is served, finished, over REST.
    const caller = await seedCaller(t.app, tenant.id);
    const list = await call(t.url, 'GET', '/rest/investigations/1.0?limit=50&offset=0', { token: caller.token });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(incidents.length);
    for (const item of list.body.investigations) {
      const one = await call(t.url, 'GET', `/rest/investigations/1.0/${item.id}`, { token: caller.token });
      expect(one.status).toBe(200);
      expect(one.body.verdict.disposition).toBe('malicious');
      expect(one.body.decision_support.open_questions[0].question).toMatch(/authorized/);
    }
  }, 180_000);

  it('opens nothing over a day of benign traffic', async () => {
    const tenant = await seedTenant(t.app);
    const startMs = END - 24 * HOUR;
    await load(t, { seed: 5, customerId: tenant.id, startMs, endMs: END, flowsPerSecond: 0.5 });
    const result = await t.app.services.detection.runNow(tenant.id, { window: { fromMs: startMs, toMs: END }, nowMs: END });
    expect(result.opened).toEqual([]);
    expect(result.failed).toEqual([]);
  }, 180_000);
});
