import { useState } from 'react';
import { Problem, useAction } from './query-view.js';

/**
 * A delete (or a revocation) that asks once more before it acts: the first press arms it, the
 * second acts. `failed` starts the message shown when the server refuses.
 */
export function DeleteButton({ label, onDelete, failed = 'Not deleted' }: { label: string; onDelete: () => Promise<unknown>; failed?: string }) {
  const [armed, setArmed] = useState(false);
  const { busy, problem, run } = useAction();
  return (
    <span className="actions">
      {armed ? (
        <>
          <button type="button" className="danger" disabled={busy} onClick={() => void run(onDelete)}>
            Yes, {label.charAt(0).toLowerCase() + label.slice(1)}
          </button>
          <button type="button" onClick={() => setArmed(false)}>
            Keep it
          </button>
        </>
      ) : (
        <button type="button" onClick={() => setArmed(true)}>
          {label}
        </button>
      )}
      <Problem text={problem && `${failed}: ${problem}`} />
    </span>
  );
}
