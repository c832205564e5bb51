import { describe, expect, it } from 'vitest';
import { FlowQueryError } from './errors.js';
import { orderBySql, readCustomerIds, readFields, readInterval, readMetric, readPage, readSize, readSort, readTimeWindow } from './search-request.js';

const NOW = Date.UTC(2025, 0, 15, 12);

function fieldOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(FlowQueryError);
    expect((e as FlowQueryError).code).toBe('validation_error');
    return (e as FlowQueryError).field;
  }
  throw new Error('accepted');
}

describe('search request validation', () => {
  it('applies the size and page rules of the spec', () => {
    expect(readSize(undefined, false)).toBe(15);
    expect(readSize(25_000, false)).toBe(25_000);
    expect(readSize(0, true)).toBe(0);
    expect(fieldOf(() => readSize(0, false))).toBe('size');
    expect(fieldOf(() => readSize(25_001, false))).toBe('size');
    expect(fieldOf(() => readSize(1.5, false))).toBe('size');
    expect(readPage(undefined)).toBe(0);
    expect(fieldOf(() => readPage(-1))).toBe('page');
  });

  it('defaults the window to the last 15 minutes and refuses start after end', () => {
    expect(readTimeWindow(undefined, undefined, NOW)).toEqual({ startMs: NOW - 15 * 60_000, endMs: NOW });
    expect(fieldOf(() => readTimeWindow({ now: true }, { relative: { value: 1, unit: 'hours' } }, NOW))).toBe('start');
  });

  it("whitelists sort fields from the registry, default @timestamp desc, ties by id in the last key's direction", () => {
    expect(orderBySql(readSort(undefined))).toBe('`timestamp` DESC, `id` DESC');
    expect(orderBySql(readSort([{ field: '@timestamp', order: 'asc' }]))).toBe('`timestamp` ASC, `id` ASC');
    expect(orderBySql(readSort([{ field: 'bytes', order: 'asc' }, { field: 'dst.port' }]))).toBe(
      '`stats_volume_bytes_total` ASC NULLS LAST, `dst_port` DESC NULLS LAST, `id` DESC',
    );
    expect(fieldOf(() => readSort([{ field: 'nope' }]))).toBe('sort[0].field');
    expect(fieldOf(() => readSort([{ field: 'dst.port' }, { field: 'tcp.flags' }]))).toBe('sort[1].field');
    expect(fieldOf(() => readSort([{ field: 'dst.port', order: 'up' }]))).toBe('sort[0].order');
    expect(fieldOf(() => readSort([{ field: 'hostname' }]))).toBe('sort[0].field');
  });

  it('rejects wildcard fields and odd instance lists', () => {
    expect(readFields(['src.ip', ' dst.port '])).toEqual(['src.ip', 'dst.port']);
    expect(readFields([])).toBeUndefined();
    expect(fieldOf(() => readFields(['src.*']))).toBe('fields[0]');
    expect(fieldOf(() => readFields(['a', 3]))).toBe('fields[1]');
    expect(readCustomerIds(['a', 'a', 'b'])).toEqual(['a', 'b']);
    expect(fieldOf(() => readCustomerIds([]))).toBe('instance_ids');
    expect(fieldOf(() => readCustomerIds([''] as string[]))).toBe('instance_ids');
  });

  it('reads timeseries intervals and metrics', () => {
    const day = { startMs: NOW - 86_400_000, endMs: NOW };
    expect(readInterval('5m', day)).toBe(300_000);
    expect(readInterval('1d', day)).toBe(86_400_000);
    expect(fieldOf(() => readInterval('5 minutes', day))).toBe('timeseries.interval');
    expect(fieldOf(() => readInterval('1s', day))).toBe('timeseries.interval');
    expect(readMetric(undefined, 'm')).toMatchObject({ name: 'count', sql: 'count()' });
    expect(readMetric('sum:bytes', 'm')).toMatchObject({ name: 'sum:stats.volume.bytes.total', sql: 'ifNull(sum(`stats_volume_bytes_total`), 0)' });
    expect(readMetric('uniq:src.ip', 'm')).toMatchObject({ sql: 'uniqExact(`src_ip`)' });
    expect(fieldOf(() => readMetric('avg:app_name', 'timeseries.metric'))).toBe('timeseries.metric');
    expect(fieldOf(() => readMetric('median:bytes', 'timeseries.metric'))).toBe('timeseries.metric');
  });
});
