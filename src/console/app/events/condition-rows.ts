/**
 * An automation rule's conditions as the rule form edits them: one row of text per condition
 * (field, operator, value), read into `AutomationConditionInput` and written back from a saved
 * rule. Values are typed as text: `42`, `true`, `false` and `null` are read as what they say,
 * anything else as text; quotes keep text that looks like a number (`"42"`). The server checks
 * the rest (a number for gt, a list for in...) and its message names the row.
 */

/** The operators, as src/modules/automation/conditions.ts has them (condition-rows.test.ts holds the two equal). */
export const CONDITION_OPS = {
  eq: 'equals',
  ne: 'does not equal',
  in: 'is one of',
  not_in: 'is none of',
  gt: 'is more than',
  gte: 'is at least',
  lt: 'is less than',
  lte: 'is at most',
  contains: 'contains',
  exists: 'exists',
} as const;
export type ConditionOp = keyof typeof CONDITION_OPS;

/** The server's limit of conditions per rule (MATCH_LIMITS.conditions; the test holds them equal). */
export const MAX_CONDITIONS = 10;

export interface ConditionRow {
  field: string;
  op: ConditionOp;
  value: string;
}

export interface Condition {
  field: string;
  op: string;
  value: unknown;
}

const isList = (op: string) => op === 'in' || op === 'not_in';
const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** What the person means to type for `op`, as a placeholder. */
export function valueHint(op: ConditionOp): string {
  if (isList(op)) return 'e.g. malicious, escalate';
  if (op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') return 'a number, e.g. 1000000';
  return 'text, a number, true, false or null';
}

export const newRow = (): ConditionRow => ({ field: '', op: 'eq', value: '' });

/** A row with its operator changed: `exists` takes true or false, so its value starts at true. */
export function withOp(row: ConditionRow, op: ConditionOp): ConditionRow {
  if (op === 'exists') return { ...row, op, value: row.value === 'false' ? 'false' : 'true' };
  return { ...row, op, value: row.op === 'exists' ? '' : row.value };
}

function readScalar(raw: string): unknown {
  const text = raw.trim();
  if (NUMBER.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  if (text === 'null') return null;
  if (/^".*"$/s.test(text)) {
    try {
      return JSON.parse(text) as string;
    } catch {
      return text;
    }
  }
  return text;
}

/** Splits a list on commas outside double quotes (a quoted item may hold a comma). */
function splitList(text: string): string[] {
  const items: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && quoted && i + 1 < text.length) {
      current += c + text[++i];
    } else if (c === '"') {
      quoted = !quoted;
      current += c;
    } else if (c === ',' && !quoted) {
      items.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  items.push(current);
  return items.filter((item) => item.trim() !== '');
}

/** The row as the mutation's input. */
export function conditionOf(row: ConditionRow): Condition {
  return { field: row.field.trim(), op: row.op, value: isList(row.op) ? splitList(row.value).map(readScalar) : readScalar(row.value) };
}

function writeScalar(value: unknown, inList: boolean): string {
  if (typeof value !== 'string') return JSON.stringify(value);
  const plain = readScalar(value) === value && value === value.trim() && !value.startsWith('"') && !(inList && value.includes(','));
  return plain ? value : JSON.stringify(value);
}

/** A saved condition as a row, which `conditionOf` reads back to the same condition. */
export function rowOf(condition: Condition): ConditionRow {
  const op = (Object.hasOwn(CONDITION_OPS, condition.op) ? condition.op : 'eq') as ConditionOp;
  const value = Array.isArray(condition.value) ? condition.value.map((v) => writeScalar(v, true)).join(', ') : writeScalar(condition.value, false);
  return { field: condition.field, op, value };
}

/** The row a server message names (`match.conditions[2].value must be…`), if any. */
export function rowNamedIn(message: string | undefined): number | undefined {
  const found = message && /match\.conditions\[(\d+)\]/.exec(message);
  return found ? Number(found[1]) : undefined;
}
