/**
 * How SQL text is assembled: every user-supplied value becomes a typed placeholder
 * (`{p1:String}`) and travels to the server beside the text, never inside it. Identifiers come
 * only from the column registry. Every statement starts with a comment naming it, so it can be
 * found in logs and in system.query_log.
 */

export type Params = Record<string, unknown>;

/** Collects parameters for one statement and hands out their placeholders. */
export class ParamBag {
  readonly values: Params = {};
  private next = 1;
  /** Placeholders by type and value: a value used twice (the tenant in both halves of a union) is bound once. */
  private readonly placeholders = new Map<string, string>();

  /** Returns the placeholder for `value` typed as ClickHouse `type`, e.g. `{p3:Int64}`. */
  add(value: unknown, type: string): string {
    const key = `${type}\u0000${typeof value === 'bigint' ? `${value}n` : JSON.stringify(value)}`;
    const known = this.placeholders.get(key);
    if (known) return known;
    const name = `p${this.next++}`;
    this.values[name] = value;
    const placeholder = `{${name}:${type}}`;
    this.placeholders.set(key, placeholder);
    return placeholder;
  }
}

const NAME_RE = /^[a-z][a-z0-9_.:-]*$/;

/** Prefixes `sql` with the comment that names it: `/* flowstore:search.page *\/ SELECT ...`. */
export function named(name: string, sql: string): string {
  if (!NAME_RE.test(name)) throw new Error(`invalid query name ${name}`);
  return `/* ${name} */ ${sql}`;
}

const LEADING_NAME_RE = /^\s*\/\*\s*([a-z][a-z0-9_.:-]*)\s*\*\//;

/** The name from a statement's leading comment, or undefined when it has none. */
export function queryNameOf(sql: string): string | undefined {
  return LEADING_NAME_RE.exec(sql)?.[1];
}

/** Engines refuse unnamed statements so that every query in the logs can be traced to its code. */
export function requireQueryName(sql: string): string {
  const name = queryNameOf(sql);
  if (!name) throw new Error('flowstore: every statement must start with a /* name */ comment');
  return name;
}
