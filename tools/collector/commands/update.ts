// `update`: install a collector release. The reference collector is not a binary that can replace
// itself, so "installing" means: fetch the release from the signed URL when it is reachable,
// check its SHA-256, remember the new version in the state dir, and announce it with a new hello
// (as a real collector does when it comes back after restarting into the new binary).

import { createHash } from 'node:crypto';
import { CommandError, type CollectorContext, type CommandHandler } from './types.js';

const VERSION_PATTERN = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;
/** Largest release accepted; the real tarballs are a few MB. */
const MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024;

interface Download {
  reachable: boolean;
  bytes?: number;
  sha256?: string;
  error?: string;
}

export function updateCommand(ctx: CollectorContext): CommandHandler {
  return async ({ args, deadlineMs }) => install(ctx, args, deadlineMs);
}

export async function install(ctx: CollectorContext, args: Record<string, unknown>, deadlineMs: number): Promise<Record<string, unknown>> {
  const version = typeof args.version === 'string' ? args.version.trim() : '';
  if (!VERSION_PATTERN.test(version)) throw new CommandError('invalid_version', 'update needs a version');
  const { os, arch } = ctx.platform();
  const platform = typeof args.platform === 'string' ? args.platform.trim() : '';
  if (platform && platform.replace('/', '_').toLowerCase() !== `${os}_${arch}`) {
    throw new CommandError('wrong_platform', `release is for ${platform}, this host is ${os}_${arch}`);
  }
  const previous = ctx.version();
  if (version === previous) return { version, previous_version: previous, status: 'already_running' };

  const expected = typeof args.sha256 === 'string' ? args.sha256.trim().toLowerCase() : '';
  // Without a url, a checksum is checked against the service's own download of the channel's
  // latest build for this platform (the release the service just picked).
  const channel = typeof args.channel === 'string' && args.channel ? args.channel : undefined;
  const url = typeof args.url === 'string' && args.url ? args.url : expected && channel ? ctx.downloadUrl(os, arch, channel) : undefined;
  let download: Download | undefined;
  if (url) {
    download = await fetchRelease(ctx, url, Math.max(1_000, deadlineMs - Date.now() - 1_500));
    if (download.reachable && expected && download.sha256 !== expected) {
      ctx.logger.error('update.checksum_mismatch', { version, expected, actual: download.sha256 });
      throw new CommandError('checksum_mismatch', `sha256 of the download is ${download.sha256}, expected ${expected}`);
    }
    if (!download.reachable) ctx.logger.warn('update.download_unreachable', { version, error: download.error });
  }
  ctx.installVersion(version);
  ctx.logger.info('update.installed', { version, previous_version: previous, verified: Boolean(download?.reachable && expected) });
  return {
    version,
    previous_version: previous,
    status: 'installed',
    platform: `${os}_${arch}`,
    ...(url ? { source: url === args.url ? 'url' : 'download_endpoint' } : {}),
    verified: Boolean(download?.reachable && expected),
    ...(download?.reachable ? { bytes: download.bytes, sha256: download.sha256 } : {}),
    ...(download && !download.reachable ? { download_error: download.error } : {}),
  };
}

/**
 * GET the release (redirects followed), hashing it as it streams. A transport failure counts as
 * unreachable; an HTTP error is an answer and fails the update.
 */
async function fetchRelease(ctx: CollectorContext, url: string, timeoutMs: number): Promise<Download> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CommandError('invalid_url', 'update url is not a URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new CommandError('invalid_url', 'update url must be http(s)');
  let res: Response;
  try {
    res = await (ctx.fetch ?? fetch)(parsed, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return { reachable: false, error: cause?.code ?? (error as Error).message };
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    throw new CommandError('download_failed', `download answered HTTP ${res.status}`);
  }
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      if (bytes > MAX_DOWNLOAD_BYTES) throw new CommandError('download_failed', 'download is larger than 256 MiB');
      hash.update(chunk);
    }
  } catch (error) {
    if (error instanceof CommandError) throw error;
    throw new CommandError('download_failed', `download broke off: ${(error as Error).message}`);
  }
  return { reachable: true, bytes, sha256: hash.digest('hex') };
}
