import { type ReactNode, useState } from 'react';
import { request } from './api.js';
import { Link, useLocation } from './router.js';
import { SignOutMutation, type Tenant, type User } from './session.js';

interface ShellProps {
  children: ReactNode;
  /** Absent before sign-in: the header then holds the name alone. */
  user?: User;
  tenant?: Tenant;
  onTenantChange?: (customerId: string) => void;
  onSignedOut?: () => void;
}

const NAVIGATION = [
  { to: '/investigations', label: 'Investigations', matches: (path: string) => path === '/' || path.startsWith('/investigations') },
  { to: '/fleet', label: 'Fleet', matches: (path: string) => path.startsWith('/fleet') },
  { to: '/explore', label: 'Explore', matches: (path: string) => path.startsWith('/explore') },
  { to: '/search', label: 'Search', matches: (path: string) => path.startsWith('/search') },
  { to: '/events', label: 'Events', matches: (path: string) => path.startsWith('/events') },
];

/** Every page's frame: a skip link, the header (navigation, tenant, the person), and the page in <main>. */
export function Shell({ children, user, tenant, onTenantChange, onSignedOut }: ShellProps) {
  const { pathname } = useLocation();
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="shell-header">
        <span className="shell-name">Breach detection</span>
        {user && (
          <>
            <nav aria-label="Main">
              <ul>
                {NAVIGATION.map((item) => (
                  <li key={item.to}>
                    <Link to={item.to} aria-current={item.matches(pathname) ? 'page' : undefined}>
                      {item.label}
                    </Link>
                  </li>
                ))}
              </ul>
            </nav>
            {tenant && onTenantChange && <TenantSwitcher user={user} tenant={tenant} onChange={onTenantChange} />}
            <SignOut user={user} onSignedOut={onSignedOut} />
          </>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

const tenantLabel = (tenant: Tenant) => tenant.name ?? tenant.customerId;

/** An MSP's people switch between their own tenant and each child; anyone else sees theirs named. */
function TenantSwitcher({ user, tenant, onChange }: { user: User; tenant: Tenant; onChange: (customerId: string) => void }) {
  if (user.tenants.length < 2) return <span className="shell-tenant">{tenantLabel(tenant)}</span>;
  return (
    <label className="shell-tenant">
      Tenant{' '}
      <select value={tenant.customerId} onChange={(event) => onChange(event.target.value)}>
        {user.tenants.map((t) => (
          <option key={t.customerId} value={t.customerId}>
            {t.customerId === user.customer.customerId ? `${tenantLabel(t)} (yours)` : tenantLabel(t)}
          </option>
        ))}
      </select>
    </label>
  );
}

function SignOut({ user, onSignedOut }: { user: User; onSignedOut?: () => void }) {
  const [problem, setProblem] = useState<string>();
  const signOut = async () => {
    try {
      await request(SignOutMutation, {});
      onSignedOut?.();
    } catch (error) {
      setProblem(`Signing out failed: ${(error as Error).message}`);
    }
  };
  return (
    <span className="shell-person">
      <span>{user.email}</span>
      <button type="button" onClick={() => void signOut()}>
        Sign out
      </button>
      {problem && <span role="alert">{problem}</span>}
    </span>
  );
}
