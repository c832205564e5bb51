import { describe, expect, it } from 'vitest';
import { MAX_LABEL_VALUES, OTHER_LABEL, boundedLabel, registry } from './metrics.js';

describe('metrics', () => {
  it('caps a label to MAX_LABEL_VALUES values, the ones seen first kept as they are', () => {
    const label = boundedLabel();
    for (let i = 0; i < MAX_LABEL_VALUES; i++) expect(label(`op${i}`)).toBe(`op${i}`);
    expect(label('one_too_many')).toBe(OTHER_LABEL);
    expect(label('op0')).toBe('op0');
    expect(label(`op${MAX_LABEL_VALUES - 1}`)).toBe(`op${MAX_LABEL_VALUES - 1}`);
  });

  it('exports the event-loop lag and process metrics with its own', async () => {
    const text = await registry.metrics();
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'process_cpu_seconds_total',
      'http_request_duration_seconds',
      'clickhouse_statement_duration_seconds',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });
});
