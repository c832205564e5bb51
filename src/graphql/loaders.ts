import type { NodeDetailsLoader } from '../modules/nodes/node-details.js';
import type { NodeService } from '../modules/nodes/nodes.service.js';

/**
 * Per-request batch loaders: a list of N nodes asks for their profiles, owners and latest releases
 * in one statement each. Created lazily, so requests that need none pay nothing.
 */
export class Loaders {
  private details?: NodeDetailsLoader;

  constructor(private readonly nodes: NodeService) {}

  get nodeDetails(): NodeDetailsLoader {
    this.details ??= this.nodes.detailsLoader();
    return this.details;
  }
}
