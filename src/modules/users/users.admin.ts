import { parseArgs } from 'node:util';
import { roles } from '../../auth/actions.js';
import { existingCustomer, usageError } from '../../admin/usage.js';
import type { Config } from '../../config.js';
import type { User } from '../../generated/prisma/client.js';
import type { Database } from '../../infra/database.js';
import { PublicLinks } from '../../infra/links.js';
import { TenantDirectory } from '../../tenancy/tenant-directory.js';
import { tenantScopeLoader } from '../../tenancy/tenant-scope.js';
import { TenantStore } from '../../tenancy/tenants.store.js';
import { noEvents } from '../events/events.service.js';
import { SignInGuard } from './sign-in-guard.js';
import { UserSessionStore } from './user-sessions.store.js';
import { type SetPasswordLink, UserService } from './users.service.js';
import { UserStore } from './users.store.js';

export const userCreateUsage = `  user create --customer CUSTOMER_ID --email EMAIL --role ROLE [--name NAME]   (prints a one-time set-password link, valid 24 h)
      ROLE is one of ${roles.join(', ')}`;
export const userListUsage = '  user list --customer CUSTOMER_ID';
export const userDisableUsage = '  user disable --email EMAIL   (signs the person out everywhere)';
export const userResetPasswordUsage = '  user reset-password --email EMAIL   (prints a new one-time set-password link)';

const view = (u: User) => ({
  user_id: u.id,
  customer_id: u.customerId,
  email: u.email,
  name: u.name,
  role: u.role,
  status: u.status,
  two_factor_enabled: u.totpBox !== null,
  created_at: u.createdAt.toISOString(),
});

const linkView = (link: SetPasswordLink) => ({ set_password_url: link.url, link_expires_at: link.expiresAt.toISOString() });

/**
 * Links name the console under PUBLIC_BASE_URL, or the address the server listens on. The
 * operator's commands ask nobody for a password, so nothing is locked or recorded as a sign-in.
 */
const service = (db: Database, config: Config) => {
  const store = new UserStore(db.prisma);
  return new UserService(
    store,
    new UserSessionStore(db.prisma),
    new PublicLinks(config.publicBaseUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`),
    new SignInGuard(store, noEvents, config.signIn),
    tenantScopeLoader(new TenantDirectory(new TenantStore(db.prisma))),
  );
};

const emailOf = (values: { email?: string }, usage: string) => {
  if (!values.email?.trim()) throw usageError('--email is required', usage);
  return values.email;
};

export async function createUserCommand(args: string[], db: Database, config: Config) {
  const { values } = parseArgs({
    args,
    options: { customer: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, name: { type: 'string' } },
  });
  const customerId = await existingCustomer(db, values.customer, userCreateUsage);
  if (!values.role?.trim()) throw usageError('--role is required', userCreateUsage);
  const { user, link } = await service(db, config).createForOperator({
    customerId,
    email: emailOf(values, userCreateUsage),
    role: values.role.trim(),
    name: values.name,
  });
  return { ...view(user), ...linkView(link) };
}

export async function listUsersCommand(args: string[], db: Database, config: Config) {
  const { values } = parseArgs({ args, options: { customer: { type: 'string' } } });
  return (await service(db, config).listForOperator(await existingCustomer(db, values.customer, userListUsage))).map(view);
}

export async function disableUserCommand(args: string[], db: Database, config: Config) {
  const { values } = parseArgs({ args, options: { email: { type: 'string' } } });
  const users = service(db, config);
  return view(await users.disableForOperator(await users.findForOperator(emailOf(values, userDisableUsage))));
}

export async function resetPasswordCommand(args: string[], db: Database, config: Config) {
  const { values } = parseArgs({ args, options: { email: { type: 'string' } } });
  const users = service(db, config);
  const user = await users.findForOperator(emailOf(values, userResetPasswordUsage));
  return { ...view(user), ...linkView(await users.newLinkForOperator(user)) };
}
