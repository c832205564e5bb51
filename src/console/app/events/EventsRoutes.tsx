import '../sections.css';
import { useLocation } from '../router.js';
import type { Tenant, User } from '../session.js';
import { SubNav } from '../subnav.js';
import { AutomationPage } from './AutomationPage.js';
import { EventsPage } from './EventsPage.js';

export interface EventsProps {
  user: User;
  tenant: Tenant;
}

const SECTIONS = [
  { path: '/events', label: 'Topics and records' },
  { path: '/events/automation', label: 'Automation rules' },
];

/** /events: the chosen tenant's event topics and records; /events/automation: the rules that react to them. */
export function EventsRoutes(props: EventsProps) {
  const { pathname } = useLocation();
  const automation = pathname.startsWith('/events/automation');
  return (
    <>
      <SubNav label="Events" items={SECTIONS} current={automation ? '/events/automation' : '/events'} />
      {automation ? <AutomationPage {...props} /> : <EventsPage {...props} />}
    </>
  );
}
