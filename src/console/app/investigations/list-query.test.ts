import { describe, expect, it } from 'vitest';
import { PAGE_SIZE, listVariables, readFilters, writeFilters } from './list-query.js';

describe("the investigations list's query string", () => {
  it('reads defaults from an empty one and writes nothing for them', () => {
    const filters = readFilters(new URLSearchParams());
    expect(filters).toEqual({ disposition: '', minConfidence: '', since: '', until: '', sort: 'severity', page: 1 });
    expect(writeFilters(filters)).toBe('');
    expect(listVariables(filters)).toEqual({ sort: 'severity', limit: PAGE_SIZE, offset: 0 });
  });

  it('round-trips every filter and turns it into the arguments of `investigations`', () => {
    const text = '?disposition=malicious&minConfidence=75&since=2026-11-01&until=2026-11-27&sort=recent&page=3';
    const filters = readFilters(new URLSearchParams(text));
    expect(writeFilters(filters)).toBe(text);
    expect(listVariables(filters)).toEqual({
      disposition: 'malicious',
      minConfidence: 0.75,
      since: '2026-11-01T00:00:00Z',
      until: '2026-11-27T23:59:59.999Z',
      sort: 'recent',
      limit: PAGE_SIZE,
      offset: 2 * PAGE_SIZE,
    });
  });

  it('drops what the server would refuse instead of sending it', () => {
    const filters = readFilters(new URLSearchParams('disposition=maybe&minConfidence=150&since=yesterday&sort=random&page=-2'));
    expect(filters.sort).toBe('severity');
    expect(filters.page).toBe(1);
    expect(listVariables(filters)).toEqual({ sort: 'severity', limit: PAGE_SIZE, offset: 0 });
  });
});
