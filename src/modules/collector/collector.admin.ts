import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { usageError } from '../../admin/usage.js';
import type { Config } from '../../config.js';
import { badRequest } from '../../errors.js';
import type { Database } from '../../infra/database.js';
import { PublicLinks } from '../../infra/links.js';
import { createLogger } from '../../infra/logger.js';
import { CollectorService, releaseView } from './collector.service.js';
import { CollectorStore } from './collector.store.js';

export const releaseUsage = '  release publish --file PATH --version V --channel stable|dev --os OS --arch ARCH';

/**
 * `release publish`: stores a collector build. PATH is a .tar.gz holding a regular file named
 * `prophet`, or the raw binary (packaged here as `prophet`, mode 0755). Prints the release.
 */
export async function publishReleaseCommand(args: string[], db: Database, config: Config) {
  const { values } = parseArgs({
    args,
    options: {
      file: { type: 'string' },
      version: { type: 'string' },
      channel: { type: 'string' },
      os: { type: 'string' },
      arch: { type: 'string' },
    },
  });
  const required = (name: keyof typeof values) => {
    const value = values[name];
    if (typeof value !== 'string' || value.trim() === '') throw usageError(`--${name} is required`, releaseUsage);
    return value;
  };
  const path = required('file');
  const input = { version: required('version'), channel: required('channel'), os: required('os'), arch: required('arch') };
  let file: Buffer;
  try {
    file = await readFile(path);
  } catch (error) {
    throw badRequest('invalid_release_file', `Cannot read ${path}: ${(error as Error).message}`);
  }
  // Publishing signs no download links, so the CLI needs no signing keys (nor the secrets key).
  const service = new CollectorService(new CollectorStore(db.prisma), new PublicLinks(config.publicBaseUrl), config, createLogger('warn'), () => []);
  return releaseView(await service.publish({ file, ...input }));
}
