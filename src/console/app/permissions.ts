import type { User } from './session.js';

/**
 * The least role each console action needs (docs/authorization.md, "Least role (person)"). The
 * server decides; the console only hides what the person's role may not do.
 */
const LEAST_ROLE = {
  'devices.approve': 'analyst',
  'nodes.provision': 'admin',
  'nodes.command': 'admin',
  'profiles.create': 'admin',
  'profiles.delete': 'admin',
  'deployments.create': 'admin',
  'deployments.delete': 'admin',
  'automation.write': 'admin',
  'clients.manage': 'admin',
} as const;

const RANK: Record<User['role'], number> = { viewer: 0, analyst: 1, admin: 2 };

export type ConsoleAction = keyof typeof LEAST_ROLE;

export const can = (user: User, action: ConsoleAction) => RANK[user.role] >= RANK[LEAST_ROLE[action]];
