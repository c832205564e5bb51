import { describe, expect, it } from 'vitest';
import { PAGE_SIZE, listVariables, readFilters, writeFilters } from './list-query.js';

const context = { customerId: 'cus_a', userId: 'usr_me' };

describe("the investigations list's query string", () => {
  it('reads defaults from an empty one, the open investigations, and writes nothing for them', () => {
    const filters = readFilters(new URLSearchParams());
    expect(filters).toEqual({
      disposition: '',
      minConfidence: '',
      since: '',
      until: '',
      triageStatus: 'open',
      answer: '',
      assignee: '',
      sort: 'severity',
      page: 1,
    });
    expect(writeFilters(filters)).toBe('');
    expect(listVariables(filters, context)).toEqual({ customerId: 'cus_a', open: true, sort: 'severity', limit: PAGE_SIZE, offset: 0 });
  });

  it('writes "any" triage status, which asks for every status', () => {
    const filters = { ...readFilters(new URLSearchParams()), triageStatus: 'any' };
    expect(writeFilters(filters)).toBe('?triageStatus=any');
    expect(readFilters(new URLSearchParams('triageStatus=any'))).toEqual(filters);
    expect(listVariables(filters, context)).toEqual({ customerId: 'cus_a', sort: 'severity', limit: PAGE_SIZE, offset: 0 });
  });

  it('round-trips every filter and turns it into the arguments of `investigations`', () => {
    const text =
      '?disposition=malicious&minConfidence=75&since=2026-11-01&until=2026-11-27&triageStatus=IN_PROGRESS&answer=UNSURE&assignee=me&sort=triage_status&page=3';
    const filters = readFilters(new URLSearchParams(text));
    expect(writeFilters(filters)).toBe(text);
    expect(listVariables(filters, context)).toEqual({
      customerId: 'cus_a',
      disposition: 'malicious',
      minConfidence: 0.75,
      since: '2026-11-01T00:00:00Z',
      until: '2026-11-27T23:59:59.999Z',
      triageStatus: 'IN_PROGRESS',
      answer: 'UNSURE',
      assigneeId: 'usr_me',
      sort: 'triage_status',
      limit: PAGE_SIZE,
      offset: 2 * PAGE_SIZE,
    });
  });

  it('drops what the server would refuse instead of sending it', () => {
    const filters = readFilters(
      new URLSearchParams('disposition=maybe&minConfidence=150&since=yesterday&triageStatus=OPEN&answer=yes&assignee=bob&sort=toString&page=-2'),
    );
    expect(filters.sort).toBe('severity');
    expect(filters.page).toBe(1);
    expect(listVariables(filters, context)).toEqual({ customerId: 'cus_a', sort: 'severity', limit: PAGE_SIZE, offset: 0 });
  });
});
