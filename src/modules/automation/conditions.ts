import { badRequest, missingFields } from '../../errors.js';
import { type EventTopicName, isTopic, kindsOf, topicNames } from '../events/topics.js';

/** What a rule reacts to: a topic, some of its kinds (none = all), and conditions on `data` (all must hold). */
export interface RuleMatch {
  topic: EventTopicName;
  kinds: string[];
  conditions: Condition[];
}

export const CONDITION_OPS = ['eq', 'ne', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'contains', 'exists'] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];
type Scalar = string | number | boolean | null;

export interface Condition {
  /** A dotted path into the event's `data`, e.g. `disposition` or `trigger.volume_bytes`. */
  field: string;
  op: ConditionOp;
  value: unknown;
}

export const MATCH_LIMITS = { kinds: 20, conditions: 10, field: 100, fieldDepth: 8, string: 500, list: 50 } as const;

export interface MatchInput {
  topic?: string | null;
  kinds?: ReadonlyArray<string> | null;
  conditions?: ReadonlyArray<{ field?: string | null; op?: string | null; value?: unknown }> | null;
}

const FIELD_PATH = /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/;
const invalid = (message: string) => badRequest('invalid_request', message);

/** A rule's match as submitted, checked field by field with messages that name the field. */
export function validateMatch(input: MatchInput | null | undefined): RuleMatch {
  const topic = input?.topic?.trim();
  if (!topic) throw missingFields(['match.topic']);
  if (!isTopic(topic)) throw invalid(`match.topic must be one of ${topicNames.join(', ')}`);
  const kinds = [...new Set(input?.kinds ?? [])];
  if (kinds.length > MATCH_LIMITS.kinds) throw invalid(`match.kinds may list at most ${MATCH_LIMITS.kinds} kinds`);
  for (const kind of kinds) {
    if (!kindsOf(topic).includes(kind)) throw invalid(`match.kinds: "${kind.slice(0, 100)}" is not a kind of ${topic} (${kindsOf(topic).join(', ')})`);
  }
  const conditions = input?.conditions ?? [];
  if (conditions.length > MATCH_LIMITS.conditions) throw invalid(`match.conditions may hold at most ${MATCH_LIMITS.conditions} conditions`);
  return { topic, kinds, conditions: conditions.map((c, i) => validateCondition(c, `match.conditions[${i}]`)) };
}

function validateCondition(input: { field?: string | null; op?: string | null; value?: unknown }, at: string): Condition {
  const field = input.field?.trim();
  const op = input.op?.trim();
  const absent = [!field && `${at}.field`, !op && `${at}.op`].filter((f): f is string => Boolean(f));
  if (absent.length) throw missingFields(absent);
  if (field!.length > MATCH_LIMITS.field || !FIELD_PATH.test(field!) || field!.split('.').length > MATCH_LIMITS.fieldDepth) {
    throw invalid(
      `${at}.field must be a dotted path of letters, digits and underscores (at most ${MATCH_LIMITS.field} characters, ${MATCH_LIMITS.fieldDepth} levels)`,
    );
  }
  if (!(CONDITION_OPS as readonly string[]).includes(op!)) throw invalid(`${at}.op must be one of ${CONDITION_OPS.join(', ')}`);
  const value = input.value ?? null;
  switch (op as ConditionOp) {
    case 'eq':
    case 'ne':
    case 'contains':
      if (!isScalar(value)) throw invalid(`${at}.value must be a string (at most ${MATCH_LIMITS.string} characters), a number, a boolean or null`);
      break;
    case 'in':
    case 'not_in':
      if (!Array.isArray(value) || value.length === 0 || value.length > MATCH_LIMITS.list || !value.every(isScalar)) {
        throw invalid(`${at}.value must be a list of 1 to ${MATCH_LIMITS.list} strings, numbers, booleans or nulls`);
      }
      break;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`${at}.value must be a number for ${op}`);
      break;
    case 'exists':
      if (typeof value !== 'boolean') throw invalid(`${at}.value must be true or false for exists`);
      break;
  }
  return { field: field!, op: op as ConditionOp, value };
}

function isScalar(value: unknown): value is Scalar {
  if (typeof value === 'string') return value.length <= MATCH_LIMITS.string;
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'boolean' || value === null;
}

/** True when the event is one the rule reacts to. */
export function eventMatches(
  match: { topic: string; kinds: readonly string[]; conditions: readonly Condition[] },
  event: { topic: string; kind: string; data: unknown },
): boolean {
  if (match.topic !== event.topic) return false;
  if (match.kinds.length && !match.kinds.includes(event.kind)) return false;
  return match.conditions.every((condition) => holds(condition, valueAt(event.data, condition.field)));
}

/** Own properties only: a path never reaches an object's prototype. */
function valueAt(data: unknown, path: string): unknown {
  let current = data;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function holds({ op, value }: Condition, actual: unknown): boolean {
  switch (op) {
    case 'eq':
      return actual === value;
    case 'ne':
      return actual !== value;
    case 'in':
      return (value as Scalar[]).includes(actual as Scalar);
    case 'not_in':
      return !(value as Scalar[]).includes(actual as Scalar);
    case 'gt':
      return typeof actual === 'number' && actual > (value as number);
    case 'gte':
      return typeof actual === 'number' && actual >= (value as number);
    case 'lt':
      return typeof actual === 'number' && actual < (value as number);
    case 'lte':
      return typeof actual === 'number' && actual <= (value as number);
    case 'contains':
      if (typeof actual === 'string') return typeof value === 'string' && actual.includes(value);
      return Array.isArray(actual) && actual.includes(value);
    case 'exists':
      return (actual !== undefined && actual !== null) === value;
  }
}
