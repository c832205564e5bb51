import { builder } from '../../graphql/builder.js';

/** Public: releases, links and scripts are what an unauthenticated installer fetches anyway. */
export const CollectorReleaseRef = builder.prismaObject('CollectorRelease', {
  description: 'A published collector build for one channel and platform. Its tarball holds the `prophet` binary.',
  fields: (t) => ({
    id: t.exposeID('id'),
    version: t.exposeString('version', { description: 'Semver, without a leading `v`.' }),
    channel: t.exposeString('channel', { description: '`stable` or `dev`.' }),
    os: t.exposeString('os', { description: '`linux`, `darwin` or `windows`.' }),
    arch: t.exposeString('arch', { description: '`amd64`, `arm7` or `arm64`.' }),
    platform: t.string({ description: '`os/arch`, e.g. `linux/arm7`.', resolve: (r) => `${r.os}/${r.arch}` }),
    sha256: t.exposeString('sha256', { description: 'Hex SHA-256 of the tarball.' }),
    size: t.exposeInt('size', { description: 'Tarball size in bytes.' }),
    filename: t.exposeString('filename', { description: 'Versioned: `prophet_collector_v<version>_<os>_<arch>.tar.gz`.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was published; the newest is the latest.' }),
  }),
});

const CollectorDownload = builder.simpleObject('CollectorDownload', {
  description: 'A short-lived signed link to the latest release tarball of a channel and platform.',
  fields: (t) => ({
    location: t.string({ description: 'Absolute URL; valid until `expiresAt`.' }),
    expiresAt: t.field({ type: 'DateTime' }),
    release: t.field({ type: CollectorReleaseRef }),
  }),
});

const platformArgs = (t: Parameters<Parameters<typeof builder.queryFields>[0]>[0]) => ({
  channel: t.arg.string({ required: false, description: '`stable` or `dev`; default `stable` (`dev` in a development deployment).' }),
  os: t.arg.string({ required: false, description: '`linux` (default), `darwin` or `windows`.' }),
  arch: t.arg.string({ required: false, description: '`amd64` (default), `arm7` or `arm64`.' }),
});

builder.queryFields((t) => ({
  collectorReleases: t.field({
    type: [CollectorReleaseRef],
    description: 'Published releases, newest first; each argument narrows the list (none: all).',
    args: {
      channel: t.arg.string({ required: false }),
      os: t.arg.string({ required: false }),
      arch: t.arg.string({ required: false }),
    },
    resolve: (_root, args, ctx) => ctx.services.collector.releases(args),
  }),
  latestCollectorRelease: t.field({
    type: CollectorReleaseRef,
    nullable: true,
    description: 'The newest release of a channel and platform (defaults as for the download), or null.',
    args: platformArgs(t),
    resolve: (_root, args, ctx) => ctx.services.collector.latest(args),
  }),
  collectorDownload: t.field({
    type: CollectorDownload,
    description: 'GET /rest/collector/download/1.0: 400 for an unsupported platform, 404 when there is no release.',
    args: platformArgs(t),
    resolve: (_root, args, ctx) => ctx.services.collector.download(args),
  }),
  collectorInstallScript: t.string({
    description: 'The Bash installer (GET /rest/collector/install/1.0); takes the access_key as its first argument.',
    resolve: (_root, _args, ctx) => ctx.services.collector.installScript(),
  }),
  collectorUninstallScript: t.string({
    description: 'The Bash uninstaller (GET /rest/collector/uninstall/1.0).',
    resolve: (_root, _args, ctx) => ctx.services.collector.uninstallScript(),
  }),
}));
