/**
 * The list's filters, sort and page live in the page's query string (a filtered list can be
 * bookmarked and shared), read here into the `investigations` field's arguments. What the server
 * would refuse is dropped rather than sent.
 */
import type { ConsoleInvestigationsQueryVariables, TriageAnswer, TriageStatus } from '../../../generated/console.js';

export const PAGE_SIZE = 50;
export const DISPOSITIONS = ['malicious', 'escalate', 'benign'] as const;
export const TRIAGE_STATUSES: Record<TriageStatus, string> = { NEW: 'New', ACKNOWLEDGED: 'Acknowledged', IN_PROGRESS: 'In progress', RESOLVED: 'Resolved' };
/** The triage status filter's choices: `open` (the default view) is every status but RESOLVED. */
export const TRIAGE_CHOICES: Record<'open' | TriageStatus, string> = { open: 'Open (not resolved)', ...TRIAGE_STATUSES };
export const ANSWERS: Record<TriageAnswer, string> = { AUTHORIZED: 'Authorized', UNAUTHORIZED: 'Unauthorized', UNSURE: 'Unsure' };
export const SORTS = {
  severity: 'Most severe first',
  recent: 'Newest first',
  triage_status: 'New first',
  answer: 'Unauthorized first',
  assignee: 'Assigned first',
} as const;

export interface ListFilters {
  disposition: string;
  /** 0..100 (percent), as the person types it. */
  minConfidence: string;
  /** yyyy-mm-dd, as a date input gives it. */
  since: string;
  until: string;
  /** `open` (the default), a TriageStatus, or `any`. */
  triageStatus: string;
  answer: string;
  /** `me`: assigned to the signed-in person. */
  assignee: string;
  sort: keyof typeof SORTS;
  page: number;
}

const TEXT_FILTERS = ['disposition', 'minConfidence', 'since', 'until', 'triageStatus', 'answer', 'assignee'] as const;
/** What a filter absent from the query string means: the list opens on the investigations not yet resolved. */
const DEFAULTS: Partial<Record<(typeof TEXT_FILTERS)[number], string>> = { triageStatus: 'open' };
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const isKey = <T extends object>(table: T, key: string | null): key is Extract<keyof T, string> => key != null && Object.hasOwn(table, key);

export function readFilters(params: URLSearchParams): ListFilters {
  const page = Number(params.get('page') ?? '1');
  const sort = params.get('sort');
  const text = Object.fromEntries(TEXT_FILTERS.map((key) => [key, params.get(key) ?? DEFAULTS[key] ?? ''])) as Pick<ListFilters, (typeof TEXT_FILTERS)[number]>;
  return { ...text, sort: isKey(SORTS, sort) ? sort : 'severity', page: Number.isInteger(page) && page >= 1 ? page : 1 };
}

/** The query string for `filters`, leaving out what is at its default. */
export function writeFilters(filters: ListFilters): string {
  const params = new URLSearchParams();
  for (const key of TEXT_FILTERS) if (filters[key] !== (DEFAULTS[key] ?? '')) params.set(key, filters[key]);
  if (filters.sort !== 'severity') params.set('sort', filters.sort);
  if (filters.page > 1) params.set('page', String(filters.page));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The arguments for one tenant (`customerId`) as seen by the person `userId` (for "assigned to me"). */
export function listVariables(filters: ListFilters, context: { customerId: string; userId: string }): ConsoleInvestigationsQueryVariables {
  const confidence = Number(filters.minConfidence);
  return {
    customerId: context.customerId,
    disposition: (DISPOSITIONS as readonly string[]).includes(filters.disposition) ? filters.disposition : undefined,
    minConfidence: filters.minConfidence !== '' && confidence >= 0 && confidence <= 100 ? confidence / 100 : undefined,
    // Whole days in UTC: from the start of `since` to the end of `until`.
    since: DATE.test(filters.since) ? `${filters.since}T00:00:00Z` : undefined,
    until: DATE.test(filters.until) ? `${filters.until}T23:59:59.999Z` : undefined,
    triageStatus: isKey(TRIAGE_STATUSES, filters.triageStatus) ? filters.triageStatus : undefined,
    open: filters.triageStatus === 'open' ? true : undefined,
    answer: isKey(ANSWERS, filters.answer) ? filters.answer : undefined,
    assigneeId: filters.assignee === 'me' ? context.userId : undefined,
    sort: filters.sort,
    limit: PAGE_SIZE,
    offset: (filters.page - 1) * PAGE_SIZE,
  };
}
