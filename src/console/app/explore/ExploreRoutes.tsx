import { navigate, useLocation } from '../router.js';
import type { Tenant } from '../session.js';
import '../sections.css';
import { OrganizationPage } from './OrganizationPage.js';
import { OrganizationsPage } from './OrganizationsPage.js';
import { type RangeKey, readRange, relativeStart } from './range.js';

export const EXPLORE_RANGES: RangeKey[] = ['1d', '7d', '30d'];

export interface ExploreProps {
  tenant: Tenant;
  range: RangeKey;
  onRange: (range: RangeKey) => void;
}

/** /explore: the organizations the chosen tenant talks to; /explore/org/<name>: one of them. */
export function ExploreRoutes({ tenant }: { tenant: Tenant }) {
  const location = useLocation();
  const range = readRange(location.searchParams, '7d');
  const onRange = (next: RangeKey) => navigate(`${location.pathname}?range=${next}`);
  const org = /^\/explore\/org\/(.+)$/.exec(location.pathname);
  return org ? (
    <OrganizationPage tenant={tenant} range={range} onRange={onRange} org={decodeURIComponent(org[1]!)} />
  ) : (
    <OrganizationsPage tenant={tenant} range={range} onRange={onRange} />
  );
}

/** The request every explore field takes: the chosen tenant, the range ending now. */
export const exploreRequest = (tenant: Tenant, range: RangeKey, size?: number) => ({
  instanceIds: [tenant.customerId],
  start: relativeStart(range),
  ...(size ? { size } : {}),
});
