import { type ComponentType, useCallback, useEffect, useState } from 'react';
import { ApiError, request } from './api.js';
import { InvestigationPage } from './investigations/InvestigationPage.js';
import { InvestigationsPage } from './investigations/InvestigationsPage.js';
import { lazyPage } from './lazy-page.js';
import { useLocation } from './router.js';
import { MeQuery, type Tenant, type User } from './session.js';
import { Shell } from './Shell.js';
import { SignInPage } from './SignInPage.js';
import { useTenant } from './tenant.js';

/** Sections by the first segment of the path, each loaded on first use; one line each. */
const SECTIONS: Record<string, ComponentType<{ user: User; tenant: Tenant }>> = {
  fleet: lazyPage(() => import('./fleet/FleetRoutes.js').then((m) => m.FleetRoutes)),
  explore: lazyPage(() => import('./explore/ExploreRoutes.js').then((m) => m.ExploreRoutes)),
  search: lazyPage(() => import('./search/SearchPage.js').then((m) => m.SearchPage)),
  events: lazyPage(() => import('./events/EventsRoutes.js').then((m) => m.EventsRoutes)),
};

type SessionState = { kind: 'checking' } | { kind: 'signed-out'; problem?: string } | { kind: 'signed-in'; user: User };

/** Asks the server who is signed in (the cookie), then shows the sign-in page or the console. */
export function App() {
  const [session, setSession] = useState<SessionState>({ kind: 'checking' });

  const check = useCallback(async () => {
    try {
      const { me } = await request(MeQuery, {});
      setSession(me ? { kind: 'signed-in', user: me } : { kind: 'signed-out' });
    } catch (error) {
      const problem = error instanceof ApiError ? error.message : String(error);
      setSession({ kind: 'signed-out', problem: `Your session could not be checked: ${problem}` });
    }
  }, []);
  useEffect(() => void check(), [check]);

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
        <SignInPage problem={session.problem} onSignedIn={(user) => setSession({ kind: 'signed-in', user })} />
      </Shell>
    );
  }
  return <SignedIn user={session.user} onSignedOut={() => setSession({ kind: 'signed-out' })} />;
}

function SignedIn({ user, onSignedOut }: { user: User; onSignedOut: () => void }) {
  const [tenant, setTenant] = useTenant(user);
  const { pathname } = useLocation();
  const detail = /^\/investigations\/([^/]+)$/.exec(pathname);
  const Section = SECTIONS[pathname.split('/')[1]!];
  return (
    <Shell user={user} tenant={tenant} onTenantChange={setTenant} onSignedOut={onSignedOut}>
      {Section ? (
        <Section user={user} tenant={tenant} />
      ) : detail ? (
        <InvestigationPage id={decodeURIComponent(detail[1]!)} />
      ) : (
        <InvestigationsPage tenant={tenant} />
      )}
    </Shell>
  );
}
