/**
 * The console's pages by path, each loaded on first visit (React.lazy) so the first download
 * holds only the shell and sign-in. One row a page: add a page by adding a row.
 */
import { type ComponentType, lazy } from 'react';
import type { Tenant, User } from './session.js';

export interface PageProps {
  user: User;
  tenant: Tenant;
  /** The path's captured parts, decoded. */
  params: string[];
}

type Loader = () => Promise<Record<string, ComponentType<PageProps>>>;
const page = (load: Loader, name: string) => lazy(async () => ({ default: (await load())[name]! }));

export const ROUTES: { path: RegExp; page: ComponentType<PageProps> }[] = [
  { path: /^\/(?:investigations)?$/, page: page(() => import('./investigations/InvestigationsPage.js'), 'InvestigationsPage') },
  { path: /^\/investigations\/([^/]+)$/, page: page(() => import('./investigations/InvestigationPage.js'), 'InvestigationPage') },
  { path: /^\/people$/, page: page(() => import('./people/PeoplePage.js'), 'PeoplePage') },
  { path: /^\/account$/, page: page(() => import('./people/AccountPage.js'), 'AccountPage') },
];

export function route(pathname: string): { page: ComponentType<PageProps>; params: string[] } | undefined {
  for (const row of ROUTES) {
    const match = row.path.exec(pathname);
    if (match) return { page: row.page, params: match.slice(1).map((part) => decodeURIComponent(part)) };
  }
  return undefined;
}
