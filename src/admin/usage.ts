import { badRequest, notFound } from '../errors.js';
import type { Database } from '../infra/database.js';
import { TenantStore } from '../tenancy/tenants.store.js';

/**
 * A mistake in how the admin CLI was called (a missing or malformed option): the CLI prints it as
 * plain text followed by the command's usage, and exits 2.
 */
export const usageError = (problem: string, usage: string) => badRequest('usage', `${problem}\nusage:\n${usage}`);

/** The tenant `--customer` names: a usage error without it, 404 `not_found` when no tenant has that id. */
export async function existingCustomer(db: Database, id: string | undefined, usage: string): Promise<string> {
  if (!id?.trim()) throw usageError('--customer is required', usage);
  if (!(await new TenantStore(db.prisma).find(id.trim()))) throw notFound('not_found', `Customer ${id.trim()} was not found`);
  return id.trim();
}
