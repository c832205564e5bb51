import { useCallback, useState } from 'react';
import { type Operation, request } from './api.js';

/**
 * A mutation a person starts: `busy` while it runs (controls disable themselves), `problem` the
 * server's refusal in its words. `run` answers the result, or undefined when it failed; `onDone`
 * runs after each success (typically: reload what the page shows).
 */
export function useAction(onDone?: () => void) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string>();
  const run = useCallback(
    async <TResult, TVariables>(operation: Operation<TResult, TVariables>, variables: TVariables): Promise<TResult | undefined> => {
      setBusy(true);
      setProblem(undefined);
      try {
        const result = await request(operation, variables);
        onDone?.();
        return result;
      } catch (error) {
        setProblem((error as Error).message);
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [onDone],
  );
  return { busy, problem, run };
}
