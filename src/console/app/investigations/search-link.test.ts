import { describe, expect, it } from 'vitest';
import { searchPath } from './search-link.js';

describe("a key finding's evidence link", () => {
  it('opens the flow search with the query and its time range', () => {
    expect(searchPath({ query: 'src_ip = 10.0.0.1 and dst_port = 443', start: '2026-11-27T10:00:00Z', end: 1764241200000 })).toBe(
      '/search?q=src_ip+%3D+10.0.0.1+and+dst_port+%3D+443&start=2026-11-27T10%3A00%3A00Z&end=1764241200000',
    );
    expect(searchPath({ query: 'proto = udp' })).toBe('/search?q=proto+%3D+udp');
  });

  it('offers no link for a query it cannot read', () => {
    for (const query of [null, undefined, 'src_ip = 1.2.3.4', { start: 'x' }, { query: 42 }]) expect(searchPath(query)).toBeUndefined();
  });
});
