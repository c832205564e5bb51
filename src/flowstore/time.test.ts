import { describe, expect, it } from 'vitest';
import { FlowQueryError } from './errors.js';
import { EARLIEST_MS, LATEST_MS, parseIsoDate, resolveDateTimeFilter } from './time.js';

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

describe('DateTimeFilter', () => {
  it('resolves now, relative and absolute forms', () => {
    expect(resolveDateTimeFilter({ now: true }, 'end', NOW)).toBe(NOW);
    expect(resolveDateTimeFilter({ relative: { value: 2, unit: 'hours' } }, 'start', NOW)).toBe(NOW - 2 * 3_600_000);
    expect(resolveDateTimeFilter({ relative: { value: 1, unit: 'weeks' } }, 'start', NOW)).toBe(NOW - 7 * 86_400_000);
    expect(resolveDateTimeFilter({ absolute: { date: '2025-01-15T00:00:00Z' } }, 'start', NOW)).toBe(Date.UTC(2025, 0, 15));
  });

  it('accepts Z, +HH:MM and zone-less (UTC) absolute dates', () => {
    const utc = Date.UTC(2025, 0, 15, 12, 30);
    expect(parseIsoDate('2025-01-15T12:30:00Z')).toBe(utc);
    expect(parseIsoDate('2025-01-15T12:30:00')).toBe(utc);
    expect(parseIsoDate('2025-01-15T14:30:00+02:00')).toBe(utc);
    expect(parseIsoDate('2025-01-15T07:00:00-05:30')).toBe(utc);
    expect(parseIsoDate('2025-01-15T12:30:00.123456+00:00')).toBe(utc + 123);
    expect(parseIsoDate('2025-01-15')).toBe(Date.UTC(2025, 0, 15));
    expect(parseIsoDate('0001-01-01T00:00:00Z')).toBe(EARLIEST_MS);
    expect(parseIsoDate('0000-12-31T00:00:00Z')).toBeNull(); // no year 0000 in PostgreSQL
    expect(parseIsoDate('9999-12-31T23:59:59.999Z')).toBe(LATEST_MS);
    for (const bad of ['2025-02-30T00:00:00Z', '2025-13-01', '2025-01-15T24:00:00', 'yesterday', '2025-01-15T12:30:00+25:00']) {
      expect(parseIsoDate(bad), bad).toBeNull();
    }
  });

  it('rejects malformed filters with the field at fault', () => {
    const fail = (input: unknown) => {
      try {
        resolveDateTimeFilter(input, 'start', NOW);
      } catch (e) {
        expect(e).toBeInstanceOf(FlowQueryError);
        return (e as FlowQueryError).field;
      }
      throw new Error('accepted');
    };
    expect(fail({})).toBe('start');
    expect(fail({ now: true, relative: { value: 1, unit: 'days' } })).toBe('start');
    expect(fail({ now: false })).toBe('start.now');
    expect(fail({ relative: { value: 0, unit: 'days' } })).toBe('start.relative.value');
    expect(fail({ relative: { value: 1.5, unit: 'days' } })).toBe('start.relative.value');
    expect(fail({ relative: { value: 1, unit: 'months' } })).toBe('start.relative.unit');
    expect(fail({ relative: { value: 1e12, unit: 'days' } })).toBe('start.relative.value');
    expect(fail({ relative: { value: 2 ** 60, unit: 'weeks' } })).toBe('start.relative.value');
    expect(fail({ absolute: { date: 'nope' } })).toBe('start.absolute.date');
    expect(fail('2025-01-01')).toBe('start');
  });
});
