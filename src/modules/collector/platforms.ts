import { DomainError, type ErrorCode, badRequest } from '../../errors.js';

/** What collector builds exist (api-spec.md section 4, Collector). There is no linux/arm64 build. */
export const OSES = ['linux', 'darwin', 'windows'] as const;
export const ARCHES = ['amd64', 'arm7', 'arm64'] as const;
export const CHANNELS = ['stable', 'dev'] as const;
export const SUPPORTED_PLATFORMS = ['linux/amd64', 'linux/arm7', 'darwin/arm64', 'windows/amd64'] as const;

export type Os = (typeof OSES)[number];
export type Arch = (typeof ARCHES)[number];
export type Channel = (typeof CHANNELS)[number];

export interface Platform {
  os: Os;
  arch: Arch;
}

/**
 * Collector errors carry the human text in `error` (wire.md 13: `{"error":"Unsupported platform:
 * windows/arm7"}`), which the SDK shows as the message, and the machine code in `code`.
 */
export const collectorError = (status: number, code: ErrorCode, text: string, extra: Record<string, unknown> = {}) =>
  new DomainError(status, code, text, { body: { error: text, ...extra } });

/** A query value: trimmed and lowercased; empty means "use the default". */
const normalize = (value: string | null | undefined) => value?.trim().toLowerCase() || undefined;
const shown = (value: string) => value.slice(0, 40);

/** An os/arch pair with a build, from query values (defaults linux/amd64); 400 otherwise. */
export function parsePlatform(os: string | null | undefined, arch: string | null | undefined): Platform {
  const o = normalize(os) ?? 'linux';
  const a = normalize(arch) ?? 'amd64';
  const platform = `${o}/${a}`;
  if (!(SUPPORTED_PLATFORMS as readonly string[]).includes(platform)) {
    throw collectorError(400, 'unsupported_platform', `Unsupported platform: ${shown(o)}/${shown(a)}`, {
      supported: [...SUPPORTED_PLATFORMS],
    });
  }
  return { os: o as Os, arch: a as Arch };
}

export function parseChannel(channel: string | null | undefined, fallback: Channel): Channel {
  const c = normalize(channel) ?? fallback;
  if (!(CHANNELS as readonly string[]).includes(c)) {
    throw collectorError(400, 'invalid_channel', `Unknown channel: ${shown(c)} (use stable or dev)`, { channels: [...CHANNELS] });
  }
  return c as Channel;
}

/** `1.2.3`, `1.2.3-rc.1`, `1.2.3+build.5`; a leading `v` is dropped (the filename adds its own). */
export function parseVersion(version: string): string {
  const v = version.trim().replace(/^v/i, '');
  if (!/^\d{1,9}\.\d{1,9}\.\d{1,9}(?:-[0-9A-Za-z.-]{1,64})?(?:\+[0-9A-Za-z.-]{1,64})?$/.test(v)) {
    throw badRequest('invalid_version', `Version must look like 1.2.3 or 1.2.3-rc.1, got "${shown(version)}"`);
  }
  return v;
}

/** Versioned, so the SDK's filename-keyed cache never serves an old build for a new one. */
export const releaseFilename = (version: string, { os, arch }: Platform) => `prophet_collector_v${version}_${os}_${arch}.tar.gz`;
