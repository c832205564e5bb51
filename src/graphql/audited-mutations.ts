/**
 * The audit log's hook on GraphQL execution, owned by the envelope so that every door records a
 * mutation once: yoga (the plugin below), graphql-ws (`GraphqlEnvelope.recordMutations` from
 * onOperation) and rest-compat (`GraphqlEnvelope.run`). What an entry keeps, and for whom, is
 * the audit module's (src/modules/audit/audit.service.ts); this only reads what ran and how it ended.
 */
import {
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  Kind,
  getOperationAST,
  valueFromASTUntyped,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { presentError } from './error-codes.js';

/** One root field of a mutation that ran: its arguments as sent, and `ok` or the code answered. */
export interface MutationCall {
  field: string;
  args: Record<string, unknown>;
  result: string;
}

/** What a door hands over once an operation has run: the fields of its ExecutionArgs that matter here. */
export interface RanOperation {
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Readonly<Record<string, unknown>> | null;
  contextValue?: unknown;
}

export type RecordMutations = (ran: RanOperation, result: ExecutionResult | AsyncIterable<unknown>) => void;

/** The root field nodes of a selection, fragments at the root included. */
function rootFieldNodes(selectionSet: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, seen = new Set<string>()): FieldNode[] {
  return selectionSet.selections.flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return selection.name.value === '__typename' ? [] : [selection];
    if (selection.kind === Kind.INLINE_FRAGMENT) return rootFieldNodes(selection.selectionSet, fragments, seen);
    const fragment = fragments.get(selection.name.value);
    if (!fragment || seen.has(fragment.name.value)) return [];
    seen.add(fragment.name.value);
    return rootFieldNodes(fragment.selectionSet, fragments, seen);
  });
}

/** The code a caller was answered for `error` (error-codes.ts decides; a bug is `internal_error`). */
const codeOf = (error: Error) => String(presentError(error, () => undefined).extensions.code);

/**
 * The mutation fields `ran` executed and how each ended. Mutation fields run one after another and
 * are non-null: when one fails, `data` is null and the fields after it never ran, so without data
 * only the fields an error names are returned. A stream (@defer) counts as ok.
 */
export function mutationCalls(ran: RanOperation, result: ExecutionResult | AsyncIterable<unknown>): MutationCall[] {
  const operation = getOperationAST(ran.document, ran.operationName ?? undefined);
  if (operation?.operation !== 'mutation') return [];
  const fragments = new Map(ran.document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const executed = Symbol.asyncIterator in result ? undefined : (result as ExecutionResult);
  const data = executed ? (executed.data as Record<string, unknown> | null | undefined) : {};
  const variables = { ...ran.variableValues };
  // Two selections under one response key run once (GraphQL merges them).
  const keys = new Set<string>();
  return rootFieldNodes(operation.selectionSet, fragments).flatMap((node) => {
    const key = node.alias?.value ?? node.name.value;
    if (keys.has(key)) return [];
    keys.add(key);
    const error = executed?.errors?.find((e) => e.path?.[0] === key);
    const failed = error && (data == null || data[key] == null);
    if (!failed && (data == null || (executed && !(key in data)))) return [];
    const args = Object.fromEntries((node.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value, variables)]));
    return [{ field: node.name.value, args, result: failed ? codeOf(error) : 'ok' }];
  });
}

/** yoga: hands every executed operation to `record` (which ignores all but mutations). */
export function auditedMutations(record: RecordMutations): Plugin<Context> {
  return {
    onExecute({ args }) {
      return { onExecuteDone: ({ result }) => record(args, result) };
    },
  };
}
