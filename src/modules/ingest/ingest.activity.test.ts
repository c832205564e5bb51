import { describe, expect, it } from 'vitest';
import { startTestApp } from '../../../test/kit/app.js';
import { call } from '../../../test/kit/http.js';
import { enrolledCollector, flow } from '../../../test/kit/ingest.js';
import { seedTree } from '../../../test/kit/seed.js';
import { createLogger } from '../../infra/logger.js';
import { IngestActivity } from './ingest.activity.js';

const capture = () => {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, logger: createLogger('info', {}, (line) => lines.push(JSON.parse(line))) };
};

describe('IngestActivity', () => {
  it('writes one line per node per interval, however many batches came', async () => {
    const { lines, logger } = capture();
    const activity = new IngestActivity(logger, 60_000);
    for (let i = 0; i < 100; i++) activity.accepted('node_a', 50, i === 0 ? 2 : 0);
    activity.accepted('node_b', 7, 0);
    activity.refused('ingest_busy');
    activity.refused('authentication_error');
    activity.refused('authentication_error');
    expect(lines).toEqual([]);

    activity.flush();
    expect(lines.map(({ time: _time, level: _level, seconds: _seconds, ...line }) => line)).toEqual([
      { event: 'ingest.activity', node_id: 'node_a', batches: 100, flows: 5000, rejected: 2 },
      { event: 'ingest.activity', node_id: 'node_b', batches: 1, flows: 7, rejected: 0 },
      { event: 'ingest.activity', node_id: null, batches: 0, flows: 0, rejected: 0, refused: { ingest_busy: 1, authentication_error: 2 } },
    ]);
    activity.flush();
    expect(lines).toHaveLength(3);
    activity.stop();
  });

  it('flushes on its own each interval, and what is left on stop', async () => {
    const { lines, logger } = capture();
    const activity = new IngestActivity(logger, 50);
    activity.accepted('node_a', 1, 0);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ node_id: 'node_a', batches: 1 });
    expect(lines[0]!.seconds).toBeGreaterThanOrEqual(0);
    activity.accepted('node_a', 3, 0);
    activity.stop();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ node_id: 'node_a', batches: 1, flows: 3 });
  });
});

describe('the server log under ingest', () => {
  it('has no access line per batch, and one activity line per node on stop', async () => {
    const { lines, logger } = capture();
    const t = await startTestApp({ logger });
    let nodeId = '';
    try {
      const tree = await seedTree(t.app);
      const enrolled = await enrolledCollector(t, tree, 'quiet-log');
      const { token } = enrolled;
      nodeId = enrolled.nodeId;
      for (let i = 0; i < 5; i++) {
        const res = await call(t.url, 'POST', '/collector/ingest/1.0/flows', { token, body: { batch_id: `quiet-${i}`, flows: [flow(i)] } });
        expect(res.status).toBe(200);
      }
      await call(t.url, 'POST', '/collector/ingest/1.0/flows', { token: 'not-a-token', body: {} });
      expect((await call(t.url, 'GET', '/health')).status).toBe(200);
    } finally {
      await t.stop();
    }
    const requests = lines.filter((l) => l.event === 'http.request');
    expect(requests.some((l) => l.path === '/health')).toBe(true);
    expect(requests.filter((l) => l.path === '/collector/ingest/1.0/flows')).toEqual([]);
    const activity = lines.filter((l) => l.event === 'ingest.activity');
    expect(activity.map(({ node_id, batches, flows, refused }) => ({ node_id, batches, flows, refused }))).toEqual([
      { node_id: nodeId, batches: 5, flows: 5, refused: undefined },
      { node_id: null, batches: 0, flows: 0, refused: { authentication_error: 1 } },
    ]);
  });
});
