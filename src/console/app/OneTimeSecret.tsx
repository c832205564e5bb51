import { useRef, useState } from 'react';

/**
 * Something the server shows once (a set-password link, recovery codes, a TOTP secret): in a
 * read-only field the person can select, with a Copy button where the browser allows the clipboard.
 */
export function OneTimeSecret({ label, value, rows = 1, note }: { label: string; value: string; rows?: number; note?: string }) {
  const field = useRef<HTMLTextAreaElement>(null);
  const [copied, setCopied] = useState<string>();
  const copy = async () => {
    field.current?.select();
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied.');
    } catch {
      setCopied('Copying is not allowed here: the text is selected, copy it with your keyboard.');
    }
  };
  const id = `secret-${label.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <div className="one-time-secret">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} ref={field} readOnly rows={rows} value={value} onFocus={(e) => e.currentTarget.select()} />
      {note && <p className="note">{note}</p>}
      <button type="button" onClick={() => void copy()}>
        Copy
      </button>
      <span role="status">{copied}</span>
    </div>
  );
}
