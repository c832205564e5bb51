/**
 * Text holding a NUL character (U+0000) is refused where requests enter GraphQL: rest-compat's
 * operations, yoga and graphql-ws. PostgreSQL's text and jsonb cannot hold one, so a statement
 * that meets one fails, and the caller would get an internal error instead of a 400 naming the
 * input at fault. One check at the door instead of one per field.
 */
import { type ASTVisitor, GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const NUL = '\u0000';

/**
 * Where in `value` (keys included) a string holds NUL, as `body.sort[0].field`; undefined if
 * nowhere. Breadth first with a queue, not recursion: a body nested 100,000 deep (it fits in the
 * 1 MiB a request may carry) would overflow the stack. A path is spelt out only for a hit.
 */
export function nulTextAt(value: unknown): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? 'a value' : undefined;
  const nodes: unknown[] = [value];
  const parents: number[] = [-1];
  const keys: (string | number)[] = [''];
  const pathOf = (node: number, last?: string | number): string => {
    const segments = last === undefined ? [] : [last];
    for (let at = node; at > 0; at = parents[at]!) segments.unshift(keys[at]!);
    return segments.map((k, n) => (typeof k === 'number' ? `[${k}]` : n === 0 ? k : `.${k}`)).join('');
  };
  /** Whether `item`, under `key` of node `i`, holds NUL; objects are queued for later. */
  const holdsNul = (i: number, key: string | number, item: unknown): boolean => {
    if (typeof item === 'string') return item.includes(NUL);
    if (typeof item === 'object' && item !== null) {
      nodes.push(item);
      parents.push(i);
      keys.push(key);
    }
    return false;
  };
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (let k = 0; k < node.length; k++) if (holdsNul(i, k, node[k])) return pathOf(i, k);
      continue;
    }
    for (const key of Object.keys(node)) {
      if (key.includes(NUL)) return `a key of ${pathOf(i) || 'the input'}`;
      if (holdsNul(i, key, (node as Record<string, unknown>)[key])) return pathOf(i, key);
    }
  }
  return undefined;
}

export const nulTextMessage = (at: string) => `${at} contains a NUL character (U+0000), which no text may hold`;

/** Path-less, as GraphQL's own variable errors: a 400 `invalid_request`. */
export const nulTextError = (at: string) => new GraphQLError(nulTextMessage(at), { extensions: { code: 'invalid_request', http: { status: 400 } } });

/** The same for string literals written into a document. */
export function noNulTextLiterals(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node) {
      if (node.value.includes(NUL))
        context.reportError(new GraphQLError('A string literal contains a NUL character (U+0000), which no text may hold', { nodes: [node] }));
    },
  };
}

/** yoga: variables and literals both. */
export function refuseNulText(): Plugin {
  return {
    onParams({ params, setResult }) {
      const at = nulTextAt(params.variables);
      if (at) setResult({ errors: [nulTextError(at)] });
    },
    onValidate({ addValidationRule }) {
      addValidationRule(noNulTextLiterals);
    },
  };
}
