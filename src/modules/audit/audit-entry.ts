import type { Actor } from '../../auth/session.js';
import { badRequest } from '../../errors.js';
import { MAX_ID_LENGTH } from '../../infra/ids.js';

/** Who a recorded mutation came from: a session's actor, or nobody signed in (a failed token request). */
export type AuditActor = Actor | { kind: 'anonymous'; id: '' };
export type AuditActorKind = AuditActor['kind'];
export const auditActorKinds: readonly AuditActorKind[] = ['client', 'user', 'anonymous'];

/** What a mutation's arguments leave in the log: ids and a few harmless values, by argument path. */
export type AuditTarget = Record<string, string | number | boolean | string[]>;

/** One row of the audit log, as the writer queues it (docs/audit.md). */
export interface AuditEntry {
  customerId: string;
  at: Date;
  actor: AuditActor;
  /** The catalogue's action (src/auth/actions.ts), or `public`. */
  action: string;
  /** The Mutation field, e.g. `createProfile`. */
  field: string;
  target: AuditTarget;
  /** `ok`, or the error code the caller was answered. */
  result: string;
  requestId: string;
  clientAddress: string | null;
  userAgent: string | null;
}

/** The `auditLog` filter, checked. `result`: `ok`, `error` (any refusal), or one error code. */
export interface AuditFilter {
  actorKind?: AuditActorKind;
  actorId?: string;
  action?: string;
  result?: string;
  from?: Date;
  to?: Date;
}

// ---------------------------------------------------------------------------------------------
// Targets. Arguments are never stored whole: a leaf is kept when its name says it is an id, or it
// is on the allow-list, and never when its name hints at a secret, whatever else it says.

/** Argument names whose values are harmless and worth reading in the log. */
const HARMLESS = new Set(['name', 'handle', 'role', 'status', 'answer', 'resolution', 'action', 'operation', 'type', 'kind', 'email', 'enabled', 'topic']);
const ID_NAME = /(^id|Id|Ids)$/;
/** A name that hints at a secret is never kept, even when it ends in Id (a session id is one). */
const SECRET_NAME = /secret|password|passcode|token|code|totp|recovery|cookie|session|key|credential/i;
/** Bounds on what one entry keeps, so that a mutation with huge arguments cannot bloat the table. */
export const TARGET_LIMITS = { keys: 32, listItems: 20, depth: 3, text: MAX_ID_LENGTH } as const;

/**
 * A value cut to its limit, and made storable: a lone UTF-16 surrogate (which JSON carries but
 * PostgreSQL's jsonb refuses) and NUL become U+FFFD, so one caller's odd text cannot fail a
 * batch holding everyone's entries.
 */
const text = (value: string) => value.slice(0, TARGET_LIMITS.text).toWellFormed().replaceAll('\u0000', '\uFFFD');

function keptValue(name: string, value: unknown): AuditTarget[string] | undefined {
  if (SECRET_NAME.test(name)) return undefined;
  const isId = ID_NAME.test(name);
  if (!isId && !HARMLESS.has(name)) return undefined;
  if (typeof value === 'string') return text(value);
  if (typeof value === 'number' || typeof value === 'boolean') return isId ? String(value) : value;
  if (Array.isArray(value) && isId) {
    return value
      .filter((v): v is string => typeof v === 'string')
      .slice(0, TARGET_LIMITS.listItems)
      .map(text);
  }
  return undefined;
}

/**
 * The ids and allow-listed values of a mutation's arguments, keyed by their path
 * (`input.customerId`); input objects are walked to TARGET_LIMITS.depth, lists of them not at all.
 */
export function auditTarget(args: Record<string, unknown>): AuditTarget {
  const target: AuditTarget = {};
  let kept = 0;
  const walk = (object: Record<string, unknown>, prefix: string, depth: number) => {
    for (const [name, value] of Object.entries(object)) {
      if (kept >= TARGET_LIMITS.keys || SECRET_NAME.test(name)) continue;
      const path = prefix + name;
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        if (depth < TARGET_LIMITS.depth) walk(value as Record<string, unknown>, `${path}.`, depth + 1);
        continue;
      }
      const leaf = keptValue(name, value);
      if (leaf === undefined) continue;
      target[path] = leaf;
      kept += 1;
    }
  };
  walk(args, '', 1);
  return target;
}

/** The tenant a target names (`customerId` at any depth), for filing the entry under it. */
export function namedTenant(target: AuditTarget): string | undefined {
  const found = Object.entries(target).find(([path, value]) => (path === 'customerId' || path.endsWith('.customerId')) && typeof value === 'string');
  return found?.[1] as string | undefined;
}

// ---------------------------------------------------------------------------------------------
// Paging: newest first, by keyset. A cursor carries an entry's place (its time and id), so it
// still pages after the retention has removed that entry.

export interface AuditPosition {
  at: Date;
  id: bigint;
}

export const AUDIT_PAGE_SIZE = { default: 50, max: 500 } as const;
const PREFIX = 'audit:';
const CURSOR = /^audit:(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z):(\d{1,19})$/;

const invalid = (message: string) => badRequest('invalid_request', message);

/** Opaque to clients: base64 of `audit:<at, ISO 8601 in ms>:<id>`. */
export const encodeAuditCursor = (entry: AuditPosition) => Buffer.from(`${PREFIX}${entry.at.toISOString()}:${entry.id}`, 'utf8').toString('base64');

export function decodeAuditCursor(cursor: string): AuditPosition {
  const textOf = Buffer.from(cursor, 'base64').toString('utf8');
  const match = Buffer.from(textOf, 'utf8').toString('base64') === cursor ? CURSOR.exec(textOf) : null;
  const at = match ? new Date(match[1]!) : undefined;
  if (!match || !at || Number.isNaN(at.getTime()) || at.toISOString() !== match[1]) throw invalid(`Invalid cursor: ${cursor.slice(0, 200)}`);
  return { at, id: BigInt(match[2]!) };
}

/** The connection arguments as a page: forward only (`first`, `after`), newest first. */
export function auditPage(args: { first?: number | null; last?: number | null; after?: string | null; before?: string | null }) {
  if (args.last != null || args.before != null) throw invalid('The audit log pages forward only: use "first" and "after"');
  if (args.first != null && args.first < 0) throw invalid('Argument "first" must be a non-negative integer');
  return {
    after: args.after == null ? null : decodeAuditCursor(args.after),
    size: Math.min(args.first ?? AUDIT_PAGE_SIZE.default, AUDIT_PAGE_SIZE.max),
  };
}

/** The instants a time filter may name: the audit log holds none outside them. */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The filter with its texts bounded and its time range within EARLIEST–LATEST and in order. */
export function checkedFilter(filter: AuditFilter): AuditFilter {
  for (const [name, value] of Object.entries({ from: filter.from, to: filter.to })) {
    if (value !== undefined && !(value.getTime() >= EARLIEST && value.getTime() <= LATEST)) {
      throw invalid(`filter.${name} must be between 1970-01-01 and 9999-12-31`);
    }
  }
  for (const [name, value] of Object.entries({ actorId: filter.actorId, action: filter.action, result: filter.result })) {
    if (value !== undefined && (value.length === 0 || value.length > MAX_ID_LENGTH)) {
      throw invalid(`filter.${name} must be 1 to ${MAX_ID_LENGTH} characters`);
    }
  }
  if (filter.from && filter.to && filter.from > filter.to) throw invalid('filter.from must not be after filter.to');
  return filter;
}
