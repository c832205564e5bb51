/** PQL: parse → check against the registry → compile to SQL (or evaluate in JS). */
import { memoizeBounded } from '../../infra/memo.js';
import { FlowQueryError } from '../errors.js';
import { checkPql, type TypedExpr } from './check.js';
import { parsePql } from './parser.js';

export type { Expr, Condition, Value, Op } from './ast.js';
export type { TypedExpr, TypedCondition, Operand } from './check.js';
export { parsePql } from './parser.js';
export { checkPql } from './check.js';
export { compilePql, wildcardToLike } from './compile.js';
export { evaluatePql } from './evaluate.js';
export { printPql } from './printer.js';

/** Sentences longer than this are refused before parsing. */
export const MAX_SENTENCE_LENGTH = 16_384;

/**
 * Checked sentences by text: analysts and scripts repeat theirs, and parsing and checking one
 * took ~0.1 ms of a search's main thread. Trees are never changed once checked; a sentence that
 * fails throws and is not remembered.
 */
const checkedSentence = memoizeBounded(512, (sentence: string) => {
  try {
    return checkPql(parsePql(sentence));
  } catch (error) {
    // Positions are told in characters (code points), as clients count them, not UTF-16 units.
    if (error instanceof FlowQueryError && error.position !== undefined) error.position = [...sentence.slice(0, error.position)].length;
    throw error;
  }
});

/** Parses and checks a sentence; undefined or blank means match-all. */
export function readSentence(sentence: unknown): TypedExpr {
  if (sentence === undefined || sentence === null) return { type: 'all' };
  if (typeof sentence !== 'string') throw new FlowQueryError('sentence', 'sentence must be a string');
  if (sentence.length > MAX_SENTENCE_LENGTH) {
    throw new FlowQueryError('sentence', `sentence is longer than ${MAX_SENTENCE_LENGTH} characters`);
  }
  return checkedSentence(sentence);
}
