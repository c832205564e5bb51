import { useState } from 'react';
import { Problem, useAction } from './query-view.js';

/** A delete that asks once more before it acts: the first press arms it, the second deletes. */
export function DeleteButton({ label, onDelete }: { label: string; onDelete: () => Promise<unknown> }) {
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
      <Problem text={problem && `Not deleted: ${problem}`} />
    </span>
  );
}
