/**
 * Limits on a document's shape, checked where documents from outside enter (yoga and
 * graphql-ws; rest-compat runs only our own operations), before graphql-js spends anything on
 * them (README, Errors):
 * - tokens and bracket nesting, counted before graphql-js lexes anything: the parser recurses
 *   once per bracket (a list literal 5,000 deep overflowed the stack), and validation grows with
 *   the square of the fields (100,000 `__typename` aliases took 4.5 s of CPU);
 * - depth and aliases, counted once parsed and before validation, fragments where they are
 *   spread: without them a short query could ask for a result exponential in its length
 *   (tenant → deployments → parent → deployments ...) and an unauthenticated one could run
 *   hundreds of mutations under aliases. `__typename` counts as any field.
 * Ours stay far below: a whole file under schema/operations, comments and fragments included,
 * reaches 431 tokens, 5 brackets deep, 6 levels and 23 aliases; GraphiQL's introspection query
 * 184 tokens, 10 brackets deep (its `__schema` is exempt from depth). The one cycle that fans
 * out, deployments inside deployments, is refused where it resolves (tenancy.schema.ts).
 */
import { type DocumentNode, type FragmentDefinitionNode, GraphQLError, Kind, type SelectionSetNode, type Source, parse } from 'graphql';
import type { Plugin } from 'graphql-yoga';

export const MAX_DOCUMENT_TOKENS = 1000;
export const MAX_DOCUMENT_NESTING = 32;
export const MAX_DOCUMENT_DEPTH = 10;
export const MAX_DOCUMENT_ALIASES = 30;

/** `source` parsed, or a GraphQLError (400 `invalid_request`) naming the limit it breaks. */
export function parseWithinLimits(source: string | Source): DocumentNode {
  const problem = sourceProblem(typeof source === 'string' ? source : source.body);
  if (problem) throw limitError(problem);
  const document = parse(source);
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

/**
 * Stops at the first token over a limit, before graphql-js's lexer has built one. A token is what
 * graphql-js's `maxTokens` counts, and also each comment and each line of a block string: its
 * lexer builds those one by one too (a body of 500,000 comment lines took it 0.25 s, and its
 * `maxTokens` does not count them). Text that is no GraphQL is passed over here, for the parser to
 * report with its place.
 */
function sourceProblem(text: string): string | undefined {
  let tokens = 0;
  let nesting = 0;
  let at = skip(IGNORED, text, 0);
  while (at < text.length) {
    const char = text[at]!;
    if (text.startsWith('"""', at)) {
      const end = blockStringEnd(text, at + 3);
      tokens += lineBreaks(text, at, end);
      at = end;
    } else if (char === '"') at = stringEnd(text, at + 1);
    else if (char === '#') at = skip(COMMENT, text, at);
    else {
      if ('{[('.includes(char) && ++nesting > MAX_DOCUMENT_NESTING) return `The document nests brackets more than ${MAX_DOCUMENT_NESTING} deep (max_nesting)`;
      if ('}])'.includes(char)) nesting--;
      at = Math.max(skip(LEXEME, text, at), at + 1); // else one punctuator, or a character that is none
    }
    if (++tokens > MAX_DOCUMENT_TOKENS) return `The document has more than ${MAX_DOCUMENT_TOKENS} tokens (max_tokens)`;
    at = skip(IGNORED, text, at);
  }
  return undefined;
}

const IGNORED = /[\t\n\r ,\uFEFF]*/y;
const COMMENT = /#[^\n\r]*/y;
/** A name, a number or the spread `...`, as graphql-js's lexer reads them. */
const LEXEME = /[_A-Za-z]\w*|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\.\./y;

/** Where the match of `pattern` (a sticky regex) at `at` ends; 0 if it does not match there. */
function skip(pattern: RegExp, text: string, at: number): number {
  pattern.lastIndex = at;
  pattern.exec(text);
  return pattern.lastIndex;
}

/** Past the string's closing quote, or its line's end when it has none. */
function stringEnd(text: string, at: number): number {
  for (; at < text.length; at++) {
    const char = text[at];
    if (char === '"') return at + 1;
    if (char === '\n' || char === '\r') return at;
    if (char === '\\') at++;
  }
  return at;
}

/** Past the block string's closing `"""` (`\"""` is no closing), or the text's end. */
function blockStringEnd(text: string, at: number): number {
  for (let end = text.indexOf('"""', at); end !== -1; end = text.indexOf('"""', end + 1)) {
    if (text[end - 1] !== '\\') return end + 3;
  }
  return text.length;
}

function lineBreaks(text: string, from: number, to: number): number {
  let breaks = 0;
  for (let at = from; at < to; at++) if (text[at] === '\n' || text[at] === '\r') breaks++;
  return breaks;
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
