/**
 * Limits on a document's shape, checked where documents from outside enter (yoga and
 * graphql-ws; rest-compat runs only our own operations), before graphql-js spends anything on
 * them (README, Errors):
 * - tokens and bracket nesting, counted by graphql-js's own lexer before parsing: the parser
 *   recurses once per bracket (a list literal 5,000 deep overflowed the stack), and validation
 *   grows with the square of the fields (100,000 `__typename` aliases took 4.5 s of CPU);
 * - depth and aliases, counted once parsed and before validation, fragments where they are
 *   spread: without them a short query could ask for a result exponential in its length
 *   (tenant → deployments → parent → deployments ...) and an unauthenticated one could run
 *   hundreds of mutations under aliases. `__typename` counts as any field.
 * Ours stay far below: the operations under schema/operations reach 394 tokens, 5 brackets deep,
 * 6 levels and 23 aliases; GraphiQL's introspection query 184 tokens, 10 brackets deep (its
 * `__schema` is exempt from depth). The one cycle that fans out, deployments inside deployments,
 * is refused where it resolves (tenancy.schema.ts).
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  Lexer,
  type SelectionSetNode,
  Source,
  TokenKind,
  parse,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

export const MAX_DOCUMENT_TOKENS = 1000;
export const MAX_DOCUMENT_NESTING = 32;
export const MAX_DOCUMENT_DEPTH = 10;
export const MAX_DOCUMENT_ALIASES = 30;

/** `source` parsed, or a GraphQLError (400 `invalid_request`) naming the limit it breaks. */
export function parseWithinLimits(source: string | Source): DocumentNode {
  const text = typeof source === 'string' ? new Source(source) : source;
  const problem = sourceProblem(text);
  if (problem) throw limitError(problem);
  const document = parse(text);
  const shape = shapeProblem(document);
  if (shape) throw limitError(shape);
  return document;
}

/** yoga: every document parsed within the limits (GET and POST alike). */
export function limitDocuments(): Plugin {
  return {
    onParse({ setParseFn }) {
      setParseFn(parseWithinLimits);
    },
  };
}

const limitError = (message: string) => new GraphQLError(message, { extensions: { code: 'invalid_request', http: { status: 400 } } });

const OPENING = new Set<TokenKind>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<TokenKind>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/**
 * Counted as graphql-js's `maxTokens` counts (comments aside), stopping at the first token over
 * a limit. A lexing error is left to the parser, which reports it with its place.
 */
function sourceProblem(source: Source): string | undefined {
  const lexer = new Lexer(source);
  let tokens = 0;
  let nesting = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (++tokens > MAX_DOCUMENT_TOKENS) return `The document has more than ${MAX_DOCUMENT_TOKENS} tokens (max_tokens)`;
      if (OPENING.has(token.kind) && ++nesting > MAX_DOCUMENT_NESTING) {
        return `The document nests brackets more than ${MAX_DOCUMENT_NESTING} deep (max_nesting)`;
      }
      if (CLOSING.has(token.kind)) nesting--;
    }
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
  }
  return undefined;
}

interface Shape {
  depth: number;
  aliases: number;
}
const LEAF: Shape = { depth: 0, aliases: 0 };

/** The first operation deeper or more aliased than allowed, as its refusal. */
function shapeProblem(document: DocumentNode): string | undefined {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  // A fragment's shape is the same wherever it is spread: each is measured once.
  const measured = new Map<string, Shape>();
  const spread = (name: string): Shape => {
    const known = measured.get(name);
    if (known) return known;
    measured.set(name, LEAF); // a cycle adds nothing here; validation refuses it
    const fragment = fragments.get(name);
    const shape = fragment ? measure(fragment.selectionSet) : LEAF;
    measured.set(name, shape);
    return shape;
  };
  const measure = (set: SelectionSetNode): Shape => {
    let depth = 0;
    let aliases = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const inner = selection.selectionSet ? measure(selection.selectionSet) : LEAF;
        // Introspection's depth is the schema's, not the caller's choice.
        if (selection.name.value !== '__schema') depth = Math.max(depth, inner.depth + 1);
        aliases += inner.aliases + (selection.alias ? 1 : 0);
      } else {
        const inner = selection.kind === Kind.INLINE_FRAGMENT ? measure(selection.selectionSet) : spread(selection.name.value);
        depth = Math.max(depth, inner.depth);
        aliases += inner.aliases;
      }
    }
    return { depth, aliases };
  };
  for (const d of document.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    const { depth, aliases } = measure(d.selectionSet);
    if (depth > MAX_DOCUMENT_DEPTH) return `The operation is more than ${MAX_DOCUMENT_DEPTH} fields deep (max_depth)`;
    if (aliases > MAX_DOCUMENT_ALIASES) return `The operation has more than ${MAX_DOCUMENT_ALIASES} aliases (max_aliases)`;
  }
  return undefined;
}
