import { useEffect, useState } from 'react';
import { type Operation, subscribe } from './api.js';

/**
 * Calls `onNext` on each result of a subscription while the page shows (re-subscribing when its
 * variables change); answers why live updates stopped, if they did, for <LiveProblem>.
 */
export function useLive<TResult, TVariables>(
  operation: Operation<TResult, TVariables>,
  variables: TVariables,
  onNext: (data: TResult) => void,
): string | undefined {
  const [problem, setProblem] = useState<string>();
  const key = JSON.stringify(variables);
  useEffect(() => {
    setProblem(undefined);
    return subscribe(operation, JSON.parse(key) as TVariables, onNext, (error) => setProblem(error.message));
  }, [operation, key, onNext]);
  return problem;
}

export const LiveProblem = ({ problem }: { problem?: string }) => (problem ? <p className="note">Live updates are off: {problem}</p> : null);
