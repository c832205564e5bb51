import { useCallback, useEffect, useState } from 'react';
import { type Operation, request } from './api.js';

export type QueryState<T> = { kind: 'loading'; previous?: T } | { kind: 'failed'; message: string } | { kind: 'done'; data: T };

/**
 * Runs a query whenever its variables change (compared as JSON), dropping the answer of one
 * superseded meanwhile; `reload` runs it again. While loading, the previous data stays on screen.
 */
export function useQuery<TResult, TVariables>(operation: Operation<TResult, TVariables>, variables: TVariables) {
  const [state, setState] = useState<QueryState<TResult>>({ kind: 'loading' });
  const [generation, setGeneration] = useState(0);
  const key = JSON.stringify(variables);
  useEffect(() => {
    const controller = new AbortController();
    setState((now) => ({ kind: 'loading', previous: now.kind === 'done' ? now.data : now.kind === 'loading' ? now.previous : undefined }));
    request(operation, JSON.parse(key) as TVariables, controller.signal).then(
      (data) => setState({ kind: 'done', data }),
      (error: Error) => controller.signal.aborted || setState({ kind: 'failed', message: error.message }),
    );
    return () => controller.abort();
  }, [operation, key, generation]);
  return { state, reload: useCallback(() => setGeneration((g) => g + 1), []) };
}

/** The data to show: the answer, or while reloading the one before it. */
export const latest = <T>(state: QueryState<T>): T | undefined => (state.kind === 'done' ? state.data : state.kind === 'loading' ? state.previous : undefined);
