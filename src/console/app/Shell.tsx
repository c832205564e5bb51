import { type ReactNode, useState } from 'react';
import { request } from './api.js';
import { Link, useLocation } from './router.js';
import { ConsoleSignOutDocument } from '../../generated/console.js';
import { hasRole, type Tenant, type User } from './session.js';
import type { UserRole } from '../../generated/console.js';

interface ShellProps {
  children: ReactNode;
  /** Absent before sign-in: the header then holds the name alone. */
  user?: User;
  tenant?: Tenant;
  onTenantChange?: (customerId: string) => void;
  onSignedOut?: () => void;
}

/** The main navigation, one line a page; `role`: the least role that sees the link. */
const NAVIGATION: { to: string; label: string; role?: UserRole }[] = [
  { to: '/investigations', label: 'Investigations' },
  { to: '/fleet', label: 'Fleet' },
  { to: '/explore', label: 'Explore' },
  { to: '/search', label: 'Search' },
  { to: '/events', label: 'Events' },
  { to: '/people', label: 'People', role: 'admin' },
  { to: '/audit', label: 'Audit log', role: 'admin' },
  // One line a page, in the order the header shows them.
];

/** The link of the page shown: its path or one below it (the console's root is the investigations). */
const isCurrent = (to: string, path: string) => path === to || path.startsWith(`${to}/`) || (path === '/' && to === NAVIGATION[0]!.to);

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
                {NAVIGATION.filter((item) => !item.role || hasRole(user, item.role)).map((item) => (
                  <li key={item.to}>
                    <Link to={item.to} aria-current={isCurrent(item.to, pathname) ? 'page' : undefined}>
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
      await request(ConsoleSignOutDocument, {});
      onSignedOut?.();
    } catch (error) {
      setProblem(`Signing out failed: ${(error as Error).message}`);
    }
  };
  return (
    <span className="shell-person">
      <Link to="/account" title="Your account: password, two-factor sign-in, sessions">
        {user.name ?? user.email}
      </Link>
      <button type="button" onClick={() => void signOut()}>
        Sign out
      </button>
      {problem && <span role="alert">{problem}</span>}
    </span>
  );
}
