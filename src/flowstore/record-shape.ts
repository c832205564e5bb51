/**
 * What a record may be (docs/collector-protocol.md section 4): at most MAX_RECORD_DEPTH levels deep,
 * finite numbers only; anything else is refused on its own (FlowIngestError), never by failing its
 * batch.
 */
import { FlowIngestError } from './errors.js';

/**
 * How deep a record may nest, the record itself being level 1 (the registry's deepest leaf is at
 * level 4). Generous for any real record, and far below what JSON.stringify can walk: a record
 * 5,000 levels deep made it throw a RangeError, which failed its whole batch with a 503 that a
 * collector retried for ever.
 */
export const MAX_RECORD_DEPTH = 64;

/** `a.b[0].c`, cut after about 100 characters at a key's end. */
function pathText(keys: readonly (string | number)[]): string {
  let text = '';
  for (const [i, k] of keys.entries()) {
    if (text.length >= 100) return `${text}…`;
    text += typeof k === 'number' ? `[${k}]` : i ? `.${k}` : k;
  }
  return text;
}

/**
 * Refuses (FlowIngestError) a record nested deeper than MAX_RECORD_DEPTH, or holding a number that
 * is not finite (JSON.parse reads a literal beyond ±1.8e308, such as 1e400, as Infinity, which would
 * be stored as 0 or null), naming the first such place. Recursion stops at the limit, so no record
 * can exhaust the stack; the walk builds nothing until it finds a problem, and then only the path
 * to it.
 */
export function checkShape(record: object, index: number): void {
  const problem = shapeProblem(record, 1);
  if (problem) throw new FlowIngestError(index, pathText(problem.keys), problem.reason);
}

/** Whether `value`, found at level `depth` of a record, breaks the rules checkShape enforces. */
export const isOutOfShape = (value: object, depth: number): boolean => shapeProblem(value, depth) !== undefined;

interface ShapeProblem {
  /** Where, from the record down: filled in on the way back up. */
  keys: (string | number)[];
  reason: string;
}

function shapeProblem(value: object, depth: number): ShapeProblem | undefined {
  if (depth > MAX_RECORD_DEPTH) return { keys: [], reason: `nests deeper than ${MAX_RECORD_DEPTH} levels` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = childProblem(value[i], depth);
      if (problem) {
        problem.keys.unshift(i);
        return problem;
      }
    }
  } else {
    for (const key in value) {
      const problem = childProblem((value as Record<string, unknown>)[key], depth);
      if (problem) {
        problem.keys.unshift(key);
        return problem;
      }
    }
  }
  return undefined;
}

function childProblem(child: unknown, depth: number): ShapeProblem | undefined {
  if (typeof child === 'number') return Number.isFinite(child) ? undefined : { keys: [], reason: 'expected a finite number, got a number beyond ±1.8e308' };
  return child !== null && typeof child === 'object' ? shapeProblem(child, depth + 1) : undefined;
}
