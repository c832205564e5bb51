import { type FormEvent, useState } from 'react';
import { ConsoleSetPasswordDocument } from '../../generated/console.js';
import { ApiError, request } from './api.js';
import { Link } from './router.js';

/** docs/users.md: 12 to 256 characters, no composition rules. */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

/**
 * The token of a set-password link sits in the fragment (`#token=…`), which the browser sends to
 * no server. It is read once and the fragment is wiped from the address bar and history, so it
 * goes nowhere but to our /graphql, and never to a log.
 */
function takeToken(): string {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
  if (location.hash) history.replaceState(history.state, '', location.pathname + location.search);
  return token;
}

/** `/console/set-password#token=…`: a new person (an invitation) or a reset sets their password. */
export function SetPasswordPage() {
  const [token] = useState(takeToken);
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [state, setState] = useState<{ kind: 'editing' | 'busy' | 'done' } | { kind: 'failed'; message: string }>({ kind: 'editing' });

  if (!token) {
    return (
      <section className="sign-in" aria-labelledby="set-password-title">
        <h1 id="set-password-title">Set your password</h1>
        <p role="alert" className="problem">
          This link has no token. Open the whole link you were given, or ask an admin of your organization for a new one.
        </p>
      </section>
    );
  }
  if (state.kind === 'done') {
    return (
      <section className="sign-in" aria-labelledby="set-password-title">
        <h1 id="set-password-title">Password set</h1>
        <p role="status">Your password is set. You can sign in with it now.</p>
        <Link to="/">Sign in</Link>
      </section>
    );
  }
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (password !== repeat) return setState({ kind: 'failed', message: 'The two passwords differ. Type the same password twice.' });
    setState({ kind: 'busy' });
    try {
      await request(ConsoleSetPasswordDocument, { token, password });
      setState({ kind: 'done' });
    } catch (error) {
      const message =
        error instanceof ApiError && error.code === 'invalid_link'
          ? 'This link was used already, has expired or is not known. Ask an admin of your organization for a new one.'
          : (error as Error).message;
      setState({ kind: 'failed', message });
    }
  };
  return (
    <section className="sign-in" aria-labelledby="set-password-title">
      <h1 id="set-password-title">Set your password</h1>
      <form onSubmit={(event) => void submit(event)}>
        <p className="note" id="password-rule">
          {PASSWORD_MIN} to {PASSWORD_MAX} characters; a few words you can remember make a good one.
        </p>
        <label htmlFor="new-password">New password</label>
        <input
          id="new-password"
          type="password"
          autoComplete="new-password"
          aria-describedby="password-rule"
          minLength={PASSWORD_MIN}
          maxLength={PASSWORD_MAX}
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <label htmlFor="repeat-password">The same password again</label>
        <input id="repeat-password" type="password" autoComplete="new-password" required value={repeat} onChange={(e) => setRepeat(e.target.value)} />
        <button type="submit" disabled={state.kind === 'busy'}>
          {state.kind === 'busy' ? 'Setting…' : 'Set password'}
        </button>
        <p className="sign-in-error" role="alert">
          {state.kind === 'failed' ? state.message : ''}
        </p>
      </form>
    </section>
  );
}
