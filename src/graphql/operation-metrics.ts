import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { boundedLabel, graphqlOperations } from '../infra/metrics.js';

/** `graphql`: posted to /graphql; `ws`: over graphql-ws; `rest`: run for a REST path. */
export type Transport = 'graphql' | 'ws' | 'rest';
export type Outcome = 'ok' | 'error' | 'invalid';

/** Operation names are the client's to choose: their label is capped (metrics.ts). */
const operationLabel = boundedLabel();

/** Counts one operation of `document` (the one `operationName` selects) under its name and type. */
export function countOperation(document: DocumentNode | undefined, operationName: string | null | undefined, transport: Transport, outcome: Outcome): void {
  const operation = document ? getOperationAST(document, operationName) : null;
  graphqlOperations.inc({
    operation: operationLabel(operation ? (operation.name?.value ?? 'anonymous') : 'unknown'),
    type: operation?.operation ?? 'unknown',
    transport,
    outcome,
  });
}

/** `error` when the result carries errors; a stream (@defer, subscriptions) counts as started. */
export const outcomeOf = (result: ExecutionResult | AsyncIterable<unknown>): Outcome =>
  Symbol.asyncIterator in result || !(result as ExecutionResult).errors?.length ? 'ok' : 'error';

/** yoga: counts every operation posted to /graphql, including those that do not parse or validate. */
export function operationMetrics(): Plugin {
  const operationNameOf = (context: unknown) => (context as { params?: { operationName?: string | null } }).params?.operationName;
  return {
    onParse() {
      return ({ result }) => {
        if (result instanceof Error) countOperation(undefined, undefined, 'graphql', 'invalid');
      };
    },
    onValidate({ params, context }) {
      return ({ valid }) => {
        if (!valid) countOperation(params.documentAST, operationNameOf(context), 'graphql', 'invalid');
      };
    },
    onExecute({ args }) {
      return { onExecuteDone: ({ result }) => countOperation(args.document, args.operationName, 'graphql', outcomeOf(result)) };
    },
    onSubscribe({ args }) {
      countOperation(args.document, args.operationName, 'graphql', 'ok');
    },
  };
}
