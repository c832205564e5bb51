import { useLocation } from '../router.js';
import { ApiClientsPage } from './ApiClientsPage.js';
import { SubNav } from '../subnav.js';
import type { Tenant, User } from '../session.js';
import { DeploymentsPage } from './DeploymentsPage.js';
import { DevicesPage } from './DevicesPage.js';
import { NodePage } from './NodePage.js';
import { NodesPage } from './NodesPage.js';
import { ProfilesPage } from './ProfilesPage.js';
import { ProvisionPage } from './ProvisionPage.js';
import '../sections.css';

export interface FleetProps {
  user: User;
  tenant: Tenant;
}

const SECTIONS = [
  { path: '/fleet', label: 'Nodes', Page: NodesPage },
  { path: '/fleet/devices', label: 'Device approvals', Page: DevicesPage },
  { path: '/fleet/provision', label: 'Provision a collector', Page: ProvisionPage },
  { path: '/fleet/profiles', label: 'Profiles', Page: ProfilesPage },
  { path: '/fleet/deployments', label: 'Deployments', Page: DeploymentsPage },
  { path: '/fleet/api-clients', label: 'API clients', Page: ApiClientsPage },
];

/** The fleet's pages under /fleet, with their own navigation; a node's detail at /fleet/nodes/<id>. */
export function FleetRoutes(props: FleetProps) {
  const { pathname } = useLocation();
  const node = /^\/fleet\/nodes\/([^/]+)$/.exec(pathname);
  const section = SECTIONS.find((s) => s.path === pathname) ?? SECTIONS[0]!;
  return (
    <>
      <SubNav label="Fleet" items={SECTIONS} current={node ? undefined : section.path} />
      {node ? <NodePage {...props} nodeId={decodeURIComponent(node[1]!)} /> : <section.Page {...props} />}
    </>
  );
}
