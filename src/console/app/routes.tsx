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

/** A module's page by its export name, typed: `name` must name an export that is a page. */
const page = <M extends Record<K, ComponentType<PageProps>>, K extends string>(load: () => Promise<M>, name: K) =>
  lazy(async () => ({ default: (await load())[name] }));

export const ROUTES: { path: RegExp; page: ComponentType<PageProps> }[] = [
  { path: /^\/(?:investigations)?$/, page: page(() => import('./investigations/InvestigationsPage.js'), 'InvestigationsPage') },
  { path: /^\/investigations\/([^/]+)$/, page: page(() => import('./investigations/InvestigationPage.js'), 'InvestigationPage') },
  { path: /^\/fleet(?:\/.*)?$/, page: page(() => import('./fleet/FleetRoutes.js'), 'FleetRoutes') },
  { path: /^\/explore(?:\/.*)?$/, page: page(() => import('./explore/ExploreRoutes.js'), 'ExploreRoutes') },
  { path: /^\/search$/, page: page(() => import('./search/SearchPage.js'), 'SearchPage') },
  { path: /^\/events(?:\/.*)?$/, page: page(() => import('./events/EventsRoutes.js'), 'EventsRoutes') },
  { path: /^\/people$/, page: page(() => import('./people/PeoplePage.js'), 'PeoplePage') },
  { path: /^\/account$/, page: page(() => import('./people/AccountPage.js'), 'AccountPage') },
  { path: /^\/audit$/, page: page(() => import('./audit/AuditPage.js'), 'AuditPage') },
];

export function route(pathname: string): { page: ComponentType<PageProps>; params: string[] } | undefined {
  for (const row of ROUTES) {
    const match = row.path.exec(pathname);
    if (match) return { page: row.page, params: match.slice(1).map((part) => decodeURIComponent(part)) };
  }
  return undefined;
}
