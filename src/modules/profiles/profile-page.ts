import { badRequest } from '../../errors.js';
import { plausibleId } from '../../infra/ids.js';

/**
 * Paging the `profiles` connection by keyset. The list is ordered oldest first, then by id; a
 * cursor carries a profile's place in that order (its `createdAt` and `id`), not a reference to
 * the row, so a cursor still pages after its profile is deleted: `after` continues with the rows
 * strictly after that place, `before` with those strictly before it.
 */

export const PROFILE_PAGE_SIZE = { default: 100, max: 10_000 } as const;

/** A profile's place in the list's order; what a cursor carries. */
export interface ProfilePosition {
  createdAt: Date;
  id: string;
}

/** The connection arguments as GraphQL hands them over. */
export interface ProfilePageArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

/** Which rows a page holds: `size` of them, read from `from` (exclusive) in `direction`. */
export interface ProfilePage {
  /** `forward` reads oldest first (`first`/`after`); `backward` newest first (`last`/`before`). */
  direction: 'forward' | 'backward';
  /** The cursor's place, or null to start at the beginning (forward) or the end (backward). */
  from: ProfilePosition | null;
  size: number;
}

/**
 * The connection arguments as a page, with the rules `t.prismaConnection` applied before: sizes
 * are non-negative, default 100 and capped at 10,000; `after` goes with `first` and `before` with
 * `last`, never both cursors at once.
 */
export function profilePage(args: ProfilePageArgs): ProfilePage {
  const { first, last, after, before } = args;
  if (first != null && first < 0) throw invalid('Argument "first" must be a non-negative integer');
  if (last != null && last < 0) throw invalid('Argument "last" must be a non-negative integer');
  if (after != null && before != null) throw invalid('Arguments "before" and "after" are not supported at the same time');
  if (before != null && first != null) throw invalid('Arguments "before" and "first" are not supported at the same time');
  if (after != null && last != null) throw invalid('Arguments "after" and "last" are not supported at the same time');
  const cursor = after ?? before;
  return {
    direction: before != null || last != null ? 'backward' : 'forward',
    from: cursor == null ? null : decodeProfileCursor(cursor),
    size: Math.min(first ?? last ?? PROFILE_PAGE_SIZE.default, PROFILE_PAGE_SIZE.max),
  };
}

const PREFIX = 'profile:';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Opaque to clients: base64 of `profile:<createdAt, ISO 8601 in ms>:<id>`. */
export function encodeProfileCursor(profile: ProfilePosition): string {
  return Buffer.from(`${PREFIX}${profile.createdAt.toISOString()}:${profile.id}`, 'utf8').toString('base64');
}

/**
 * A position from a cursor this connection produced; anything else (another connection's cursor,
 * an old id-only cursor, padding or bytes that do not round-trip) is the caller's error.
 */
export function decodeProfileCursor(cursor: string): ProfilePosition {
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  // Node decodes base64 leniently (skipping stray characters); only the exact encoding we hand out counts.
  if (Buffer.from(text, 'utf8').toString('base64') !== cursor || !text.startsWith(PREFIX)) throw notOurs(cursor);
  const rest = text.slice(PREFIX.length);
  const at = rest.slice(0, 24);
  const id = rest.slice(25);
  const createdAt = new Date(at);
  const valid = ISO_MS.test(at) && rest[24] === ':' && !Number.isNaN(createdAt.getTime()) && createdAt.toISOString() === at && plausibleId(id);
  if (!valid) throw notOurs(cursor);
  return { createdAt, id };
}

const invalid = (message: string) => badRequest('invalid_request', message);
const notOurs = (cursor: string) => invalid(`Invalid cursor: ${cursor.slice(0, 200)}`);
