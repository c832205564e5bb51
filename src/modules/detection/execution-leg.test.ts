import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../../../test/kit/app.js';
import { seedTenant } from '../../../test/kit/seed.js';
import type { ProvenanceLeg } from '../investigations/investigation.model.js';
import { type FlowSpec, insertFlows } from './detection.fixtures.js';
import { MiB } from './episode.js';

/**
 * The execution leg by what the flows behind a detection say about the source process: its host
 * context (pid, program, user: what the collector on the host reads from /proc), a name only, or
 * nothing; over exfiltration (one row per subject) and a scan (windows merged into an episode).
 */
const NOW = Math.floor(Date.now() / 60_000) * 60_000;
const T0 = NOW - 2 * 3_600_000;
const WINDOW = { fromMs: NOW - 3 * 3_600_000, toMs: NOW };
const WS = '10.20.1.50';

const CURL = { name: 'curl', pid: 31337, ppid: 2211, executable: '/usr/bin/curl', user: { id: 1000, name: 'alice' } };

const upload = (process: FlowSpec['process']): FlowSpec[] =>
  Array.from({ length: 8 }, (_, i) => ({
    at: T0 + i * 30_000,
    src: WS,
    dst: '161.97.1.2',
    port: 443,
    org: 'Contabo GmbH',
    up: (250 * MiB) / 8,
    down: MiB / 8,
    secs: 120,
    process,
  }));

const sweep = (process: FlowSpec['process']): FlowSpec[] =>
  Array.from({ length: 60 }, (_, i) => ({
    at: T0 + i * 2000,
    src: WS,
    dst: `10.10.0.${1 + i}`,
    port: 445,
    up: 60,
    down: 0,
    secs: 0.001,
    answered: false,
    process,
  }));

const CASES = {
  observed: upload(CURL),
  nameOnly: upload({ name: 'curl' }),
  none: upload(undefined),
  // A collector's pid of the wrong type is no pid.
  hostilePid: upload({ name: 'curl', pid: '31337', executable: 42, user: 'alice' }),
  scanObserved: sweep({ name: 'nmap', pid: 777, executable: '/usr/bin/nmap', user: { id: 0 } }),
} satisfies Record<string, FlowSpec[]>;

describe('the execution leg from the process on the flows', () => {
  let t: TestApp;
  const legs = new Map<string, ProvenanceLeg>();

  beforeAll(async () => {
    t = await startTestApp({ env: { DETECTION_INTERVAL_SECONDS: '0' } });
    for (const [name, flows] of Object.entries(CASES)) {
      const tenant = await seedTenant(t.app);
      await insertFlows(t.app.flows, tenant.id, flows);
      const outcome = await t.app.services.detection.detectTenant(tenant.id, WINDOW, NOW);
      expect(outcome.opened).toHaveLength(1);
      const [row] = await t.app.db.prisma.investigation.findMany({ where: { customerId: tenant.id } });
      const analysis = row.analysis as unknown as { provenance: { legs: ProvenanceLeg[] } };
      legs.set(
        name,
        analysis.provenance.legs.find((l) => l.stage === 'execution')!,
      );
    }
  }, 180_000);
  afterAll(() => t.stop());

  it('names the observed process, its program and user, as directly observed', () => {
    const leg = legs.get('observed')!;
    expect(leg.confidence).toBe('directly_observed');
    expect(leg.gapReason).toBeNull();
    expect(leg.headline).toBe(`curl (pid 31337, user alice) on ${WS} opened the connections`);
    expect(leg.detail).toContain('pid 31337, /usr/bin/curl, user alice');
    expect(leg.actors).toEqual([
      { kind: 'process', label: 'curl', detail: `/usr/bin/curl, pid 31337 on ${WS}` },
      { kind: 'account', label: 'alice', detail: `uid 1000 on ${WS}` },
    ]);
    expect(leg.pivotKeys).toEqual(['process.name=curl', 'process.pid=31337', 'uid=1000', `src.ip=${WS}`]);
  });

  it('calls a process named without a pid inferred, and says what is missing', () => {
    for (const name of ['nameOnly', 'hostilePid']) {
      const leg = legs.get(name)!;
      expect(leg.confidence).toBe('inferred');
      expect(leg.headline).toBe(`curl on ${WS} opened the connections`);
      expect(leg.gapReason).toMatch(/no process id, program path or user/);
      expect(leg.actors).toEqual([{ kind: 'process', label: 'curl', detail: `on ${WS}` }]);
      expect(leg.pivotKeys).toEqual(['process.name=curl', `src.ip=${WS}`]);
    }
  });

  it('leaves the leg not established when the flows carry no process', () => {
    const leg = legs.get('none')!;
    expect(leg.confidence).toBe('not_established');
    expect(leg.actors).toEqual([]);
  });

  it('merges the host context over a detector’s windows, a uid without a name included', () => {
    const leg = legs.get('scanObserved')!;
    expect(leg.confidence).toBe('directly_observed');
    expect(leg.headline).toBe(`nmap (pid 777) on ${WS} opened the connections`);
    expect(leg.actors).toContainEqual({ kind: 'account', label: 'uid 0', detail: `on ${WS}` });
    expect(leg.pivotKeys).toEqual(['process.name=nmap', 'process.pid=777', 'uid=0', `src.ip=${WS}`]);
    expect(leg.attack.map((a) => a.techniqueId)).toContain('T1046');
  });
});
