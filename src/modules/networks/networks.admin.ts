import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { existingCustomer, usageError } from '../../admin/usage.js';
import { badRequest } from '../../errors.js';
import type { Database } from '../../infra/database.js';
import { MAX_FILE_BYTES, parseNetworkFile } from './networks.file.js';
import { OwnNetworkService } from './networks.service.js';
import { OwnNetworkStore } from './networks.store.js';

export const networksImportUsage =
  '  networks import --customer CUSTOMER_ID --file PATH [--add]   (CSV cidr,name,kind or JSON lines; replaces the list unless --add)';
export const networksListUsage = '  networks list --customer CUSTOMER_ID';

const view = (n: { cidr: string; name: string; kind: string }) => ({ cidr: n.cidr, name: n.name, kind: n.kind });

/** `networks import`: a tenant's own networks from a file, checked as the GraphQL mutations check them. */
export async function importNetworksCommand(args: string[], db: Database) {
  const { values } = parseArgs({ args, options: { customer: { type: 'string' }, file: { type: 'string' }, add: { type: 'boolean' } } });
  const customerId = await existingCustomer(db, values.customer, networksImportUsage);
  if (!values.file?.trim()) throw usageError('--file is required', networksImportUsage);
  const file = parseNetworkFile(readFile(values.file), basename(values.file));
  const result = await service(db).importFile(customerId, file.networks, values.add ? 'add' : 'replace', (i) => `line ${file.lines[i]}`);
  return { customer_id: result.customerId, imported: file.networks.length, networks: result.networks.map(view) };
}

export async function listNetworksCommand(args: string[], db: Database) {
  const { values } = parseArgs({ args, options: { customer: { type: 'string' } } });
  return (await service(db).listOf(await existingCustomer(db, values.customer, networksListUsage))).map(view);
}

const service = (db: Database) => new OwnNetworkService(new OwnNetworkStore(db.prisma));

/** The file's text; a missing, unreadable or oversized file is the operator's error, said plainly. */
function readFile(path: string): string {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    throw badRequest('invalid_file', `${path}: ${(error as Error).message}`);
  }
  if (size > MAX_FILE_BYTES) throw badRequest('invalid_file', `${path} is larger than ${MAX_FILE_BYTES} bytes`);
  return readFileSync(path, 'utf8');
}
