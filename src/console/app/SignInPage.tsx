import { type FormEvent, useEffect, useRef, useState } from 'react';
import { ApiError, request } from './api.js';
import { ConsoleSignInDocument } from '../../generated/console.js';

/** What each refusal means for the person, by its code (the sign-in contract); others show the server's message. */
const REFUSALS: Record<string, string> = {
  invalid_credentials: 'That email and password (or code) were not accepted. Check them and try again.',
};

/** Six digits (spaces allowed) are the app's code; anything else is taken for a recovery code. */
const secondFactor = (code: string) => (/^[0-9 ]{6,8}$/.test(code) ? { totpCode: code.replace(/ /g, '') } : { recoveryCode: code });

/**
 * Email and password; then, for a person with two-factor sign-in, the code from their
 * authenticator app. Errors name what to do next and are announced to screen readers.
 */
export function SignInPage({ problem, onSignedIn }: { problem?: string; onSignedIn: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [totpCode, setTotpCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(problem);
  const codeInput = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (needsCode) codeInput.current?.focus();
  }, [needsCode]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const { signIn } = await request(ConsoleSignInDocument, { input: { email: email.trim(), password, ...(needsCode && secondFactor(totpCode.trim())) } });
      if (signIn.user) return onSignedIn();
      if (signIn.secondFactorRequired) setNeedsCode(true);
    } catch (failure) {
      const code = failure instanceof ApiError ? failure.code : undefined;
      setError((code && REFUSALS[code]) ?? (failure as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      <form onSubmit={(event) => void submit(event)}>
        <label htmlFor="sign-in-email">Email</label>
        <input id="sign-in-email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <label htmlFor="sign-in-password">Password</label>
        <input id="sign-in-password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        {needsCode && (
          <>
            <label htmlFor="sign-in-code">Code from your authenticator app (or a recovery code)</label>
            <input id="sign-in-code" ref={codeInput} autoComplete="one-time-code" required value={totpCode} onChange={(e) => setTotpCode(e.target.value)} />
          </>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="sign-in-error" role="alert">
          {error}
        </p>
      </form>
      <SingleSignOn />
    </section>
  );
}

/**
 * Single sign-on starts at the server (/auth/oidc/start), which sends the browser to the
 * organization's provider and, once signed on, back to /console/ with the session cookie set.
 */
function SingleSignOn() {
  const [customer, setCustomer] = useState('');
  const start = (event: FormEvent) => {
    event.preventDefault();
    location.assign(`/auth/oidc/start?customer=${encodeURIComponent(customer.trim())}`);
  };
  return (
    <form className="sign-on" aria-labelledby="sign-on-title" onSubmit={start}>
      <h2 id="sign-on-title">Single sign-on</h2>
      <label htmlFor="sign-on-customer">Your organization's customer id</label>
      <input id="sign-on-customer" required value={customer} onChange={(e) => setCustomer(e.target.value)} placeholder="cus_…" />
      <button type="submit">Continue with your organization</button>
    </form>
  );
}
