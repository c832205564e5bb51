import { Suspense, useCallback, useEffect, useState } from 'react';
import { ConsoleMeDocument } from '../../generated/console.js';
import { ACCOUNT_CHANGED, ApiError, SESSION_ENDED, request } from './api.js';
import { route } from './routes.js';
import { useLocation } from './router.js';
import type { User } from './session.js';
import { SetPasswordPage } from './SetPasswordPage.js';
import { Shell } from './Shell.js';
import { SignInPage } from './SignInPage.js';
import { useTenant } from './tenant.js';

type SessionState = { kind: 'checking' } | { kind: 'signed-out'; problem?: string } | { kind: 'signed-in'; user: User };

/**
 * Asks the server who is signed in (the cookie, set by a password sign-in or by single sign-on's
 * return to /console/), then shows the sign-in page or the console. The set-password page is
 * for people without a session.
 */
export function App() {
  const { pathname } = useLocation();
  const [session, setSession] = useState<SessionState>({ kind: 'checking' });

  const check = useCallback(async () => {
    try {
      const { me } = await request(ConsoleMeDocument, {});
      setSession(me ? { kind: 'signed-in', user: me } : { kind: 'signed-out' });
    } catch (error) {
      const problem = error instanceof ApiError ? error.message : String(error);
      setSession({ kind: 'signed-out', problem: `Your session could not be checked: ${problem}` });
    }
  }, []);
  useEffect(() => void check(), [check]);
  useEffect(() => {
    const changed = () => void check();
    window.addEventListener(ACCOUNT_CHANGED, changed);
    return () => window.removeEventListener(ACCOUNT_CHANGED, changed);
  }, [check]);
  // A session that ends while the page is open (idle, revoked, signed out in another tab) leads back to sign-in.
  useEffect(() => {
    const ended = () => setSession({ kind: 'signed-out', problem: 'Your session has ended. Sign in again.' });
    window.addEventListener(SESSION_ENDED, ended);
    return () => window.removeEventListener(SESSION_ENDED, ended);
  }, []);

  if (pathname === '/set-password') {
    return (
      <Shell>
        <SetPasswordPage />
      </Shell>
    );
  }
  if (session.kind === 'checking') {
    return (
      <Shell>
        <p role="status">Loading…</p>
      </Shell>
    );
  }
  if (session.kind === 'signed-out') {
    return (
      <Shell>
        <SignInPage problem={session.problem} onSignedIn={() => void check()} />
      </Shell>
    );
  }
  return <SignedIn user={session.user} onSignedOut={() => setSession({ kind: 'signed-out' })} />;
}

function SignedIn({ user, onSignedOut }: { user: User; onSignedOut: () => void }) {
  const [tenant, setTenant] = useTenant(user);
  const { pathname } = useLocation();
  const found = route(pathname);
  return (
    <Shell user={user} tenant={tenant} onTenantChange={setTenant} onSignedOut={onSignedOut}>
      <Suspense fallback={<p role="status">Loading the page…</p>}>
        {found ? (
          <found.page user={user} tenant={tenant} params={found.params} />
        ) : (
          <>
            <h1>Page not found</h1>
            <p>The console has no page at this address. Choose one from the navigation above.</p>
          </>
        )}
      </Suspense>
    </Shell>
  );
}
