/**
 * The signed-in person as the console knows them (session.graphql, typed by graphql-codegen), and
 * what their role lets them do: the server refuses anyway, the console only hides what would fail.
 */
import type { ConsoleUserFragment, UserRole } from '../../generated/console.js';

export type User = ConsoleUserFragment;
export type Tenant = User['customer'];

const RANK: Record<UserRole, number> = { viewer: 0, analyst: 1, admin: 2 };

/** Whether `user` holds at least `role` (docs/users.md: each role includes the one before it). */
export const hasRole = (user: User, role: UserRole) => RANK[user.role] >= RANK[role];
