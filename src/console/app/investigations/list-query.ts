/**
 * The list's filters, sort and page live in the page's query string (a filtered list can be
 * bookmarked and shared), read here into the `investigations` field's arguments. What the server
 * would refuse is dropped rather than sent.
 */
import type { ConsoleInvestigationsQueryVariables } from '../../../generated/console.js';

export const PAGE_SIZE = 50;
export const DISPOSITIONS = ['malicious', 'escalate', 'benign'] as const;
export const SORTS = { severity: 'Most severe first', recent: 'Newest first' } as const;

export interface ListFilters {
  disposition: string;
  /** 0..100 (percent), as the person types it. */
  minConfidence: string;
  /** yyyy-mm-dd, as a date input gives it. */
  since: string;
  until: string;
  sort: keyof typeof SORTS;
  page: number;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function readFilters(params: URLSearchParams): ListFilters {
  const page = Number(params.get('page') ?? '1');
  const sort = params.get('sort');
  return {
    disposition: params.get('disposition') ?? '',
    minConfidence: params.get('minConfidence') ?? '',
    since: params.get('since') ?? '',
    until: params.get('until') ?? '',
    sort: sort === 'recent' ? 'recent' : 'severity',
    page: Number.isInteger(page) && page >= 1 ? page : 1,
  };
}

/** The query string for `filters`, leaving out what is at its default. */
export function writeFilters(filters: ListFilters): string {
  const params = new URLSearchParams();
  for (const key of ['disposition', 'minConfidence', 'since', 'until'] as const) if (filters[key]) params.set(key, filters[key]);
  if (filters.sort !== 'severity') params.set('sort', filters.sort);
  if (filters.page > 1) params.set('page', String(filters.page));
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function listVariables(filters: ListFilters): ConsoleInvestigationsQueryVariables {
  const confidence = Number(filters.minConfidence);
  return {
    disposition: (DISPOSITIONS as readonly string[]).includes(filters.disposition) ? filters.disposition : undefined,
    minConfidence: filters.minConfidence !== '' && confidence >= 0 && confidence <= 100 ? confidence / 100 : undefined,
    // Whole days in UTC: from the start of `since` to the end of `until`.
    since: DATE.test(filters.since) ? `${filters.since}T00:00:00Z` : undefined,
    until: DATE.test(filters.until) ? `${filters.until}T23:59:59.999Z` : undefined,
    sort: filters.sort,
    limit: PAGE_SIZE,
    offset: (filters.page - 1) * PAGE_SIZE,
  };
}
