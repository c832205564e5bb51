import { type FormEvent, type ReactNode, useState } from 'react';
import type { QueryState } from './use-query.js';

/** A query's three states on purpose: a status while loading, the server's reason and a retry when it failed, else the data. */
export function QueryView<T>({ state, what, reload, children }: { state: QueryState<T>; what: string; reload: () => void; children: (data: T) => ReactNode }) {
  const data = state.kind === 'done' ? state.data : state.kind === 'loading' ? state.previous : undefined;
  return (
    <div aria-live="polite" aria-busy={state.kind === 'loading'}>
      {state.kind === 'failed' && (
        <p role="alert" className="problem">
          {what} could not be loaded: {state.message}{' '}
          <button type="button" onClick={reload}>
            Try again
          </button>
        </p>
      )}
      {state.kind === 'loading' && data === undefined && <p role="status">Loading {what.toLowerCase()}…</p>}
      {data !== undefined && children(data)}
    </div>
  );
}

/**
 * A button's action against the server: busy while it runs, its failure kept to be shown beside it.
 * `run` resolves to the result, or undefined when it failed.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string>();
  const run = async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setProblem(undefined);
    try {
      return await action();
    } catch (error) {
      setProblem((error as Error).message);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, problem, run };
}

/** A form sent as an action: `send` reads its fields; on success the form is cleared and `onDone` called. */
export function useFormAction(send: (form: FormData) => Promise<unknown>, onDone: () => void) {
  const { busy, problem, run } = useAction();
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const element = event.currentTarget;
    void run(() => send(new FormData(element))).then((result) => {
      if (result === undefined) return;
      element.reset();
      onDone();
    });
  };
  return { busy, problem, onSubmit };
}

/** A form field's text, trimmed; empty when absent. */
export const formText = (form: FormData, name: string) => String(form.get(name) ?? '').trim();

export const Problem = ({ text }: { text?: string }) =>
  text ? (
    <p role="alert" className="problem">
      {text}
    </p>
  ) : null;
