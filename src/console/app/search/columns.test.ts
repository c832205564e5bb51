import { describe, expect, it } from 'vitest';
import { DEFAULT_COLUMNS, cellText, readSearch, valueAt, writeSearch } from './columns.js';

describe('the search page query string and cells', () => {
  it('reads what it writes, and drops unknown columns and terms fields', () => {
    const search = { q: "dst.port eq 443 and app_name eq 'Google Drive'", range: '1d', columns: ['src.ip', 'app_name'], terms: 'src.ip' };
    expect(readSearch(new URL(`http://x/${writeSearch(search)}`).searchParams)).toEqual(search);
    expect(readSearch(new URLSearchParams('cols=nope,src.ip&terms=secret'))).toEqual({ q: '', range: '1h', columns: ['src.ip'], terms: 'dst.port' });
    expect(readSearch(new URLSearchParams('cols=nope')).columns).toEqual(DEFAULT_COLUMNS);
  });

  it('reads nested paths and the top-level @timestamp, and shows a missing value as a dash', () => {
    const record = { '@timestamp': Date.UTC(2026, 0, 2, 3, 4, 5), src: { ip: '10.0.0.1', process: { name: 'curl' } } };
    expect(valueAt(record, 'src.process.name')).toBe('curl');
    expect(cellText(valueAt(record, '@timestamp'), '@timestamp')).toBe('2026-01-02 03:04:05');
    expect(cellText(valueAt(record, 'dst.ip'), 'dst.ip')).toBe('—');
  });
});
