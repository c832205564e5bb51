/**
 * Text holding a NUL character (U+0000) is refused where requests enter GraphQL: rest-compat's
 * operations, yoga and graphql-ws. PostgreSQL's text and jsonb cannot hold one, so a statement
 * that meets one fails, and the caller would get an internal error instead of a 400 naming the
 * input at fault. One check at the door instead of one per field.
 */
import { type ASTVisitor, GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const NUL = '\u0000';

/** Where in `value` (keys included) a string holds NUL, as `body.sort[0].field`; undefined if nowhere. */
export function nulTextAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? path || 'a value' : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = nulTextAt(value[i], `${path}[${i}]`);
      if (at) return at;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = key.includes(NUL) ? `a key of ${path || 'the input'}` : nulTextAt(item, path ? `${path}.${key}` : key);
    if (at) return at;
  }
  return undefined;
}

/** Path-less, as GraphQL's own variable errors: rest-compat answers it as a 400 `invalid_request`. */
export const nulTextError = (at: string) =>
  new GraphQLError(`${at} contains a NUL character (U+0000), which no text may hold`, { extensions: { code: 'invalid_request', http: { status: 400 } } });

/** The same for string literals written into a document. */
export function noNulTextLiterals(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node) {
      if (node.value.includes(NUL)) context.reportError(new GraphQLError('A string literal contains a NUL character (U+0000), which no text may hold', { nodes: [node] }));
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
