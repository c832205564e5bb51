import type { Prisma } from '../infra/database.js';
import { NodeDetailsLoader } from '../modules/nodes/node-details.js';
import { NodeStore } from '../modules/nodes/nodes.store.js';

/**
 * Per-request batch loaders: a list of N nodes asks for their profiles, owners and latest releases
 * in one statement each. Created lazily, so requests that need none pay nothing.
 */
export class Loaders {
  private details?: NodeDetailsLoader;

  constructor(private readonly prisma: Prisma) {}

  get nodeDetails(): NodeDetailsLoader {
    this.details ??= new NodeDetailsLoader(new NodeStore(this.prisma));
    return this.details;
  }
}
