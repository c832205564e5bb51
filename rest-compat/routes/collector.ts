import { CollectorDownloadDocument, CollectorInstallScriptDocument, CollectorUninstallScriptDocument } from '../../src/generated/operations.js';
import { RawResponse, type Route, type ServedRoute, defineRoute } from '../route.js';

const script = (text: string) =>
  new RawResponse(200, { 'content-type': 'text/plain; charset=utf-8', 'content-disposition': 'inline', 'cache-control': 'no-cache' }, text);

/** Collector (api-spec.md section 4; wire.md 13): public, no token. */
export const collectorRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/rest/collector/download/1.0',
    access: 'public',
    operation: CollectorDownloadDocument,
    variables: ({ query }) => ({ os: query.get('os'), arch: query.get('arch'), channel: query.get('channel') }),
    render: ({ download }) => new RawResponse(302, { location: download.location, 'cache-control': 'no-store', 'x-checksum-sha256': download.release.sha256 }),
  }),
  defineRoute({
    method: 'GET',
    path: '/rest/collector/install/1.0',
    access: 'public',
    operation: CollectorInstallScriptDocument,
    variables: () => ({}),
    render: (data) => script(data.script),
  }),
  defineRoute({
    method: 'GET',
    path: '/rest/collector/uninstall/1.0',
    access: 'public',
    operation: CollectorUninstallScriptDocument,
    variables: () => ({}),
    render: (data) => script(data.script),
  }),
];

/**
 * Where the download's signed link points. This row calls the collector service directly instead
 * of running a GraphQL operation: a release tarball is tens of megabytes, which an operation could
 * only return as a base64 string (a third larger, built and decoded whole in memory). The service
 * still checks the signature and expiry; the row only turns its answer into headers.
 */
export const collectorServedRoutes: ServedRoute[] = [
  {
    method: 'GET',
    path: '/rest/collector/assets/1.0/:releaseId/:filename',
    access: 'public',
    doc: {
      summary: 'Collector release tarball',
      description: 'Where the signed link of GET /rest/collector/download/1.0 points: the release archive, while its signature and expiry hold.',
      query: ['expires', 'signature'],
      contentTypes: ['application/octet-stream'],
    },
    serve: async ({ params, query }, services) => {
      const { release, content } = await services.collector.openAsset({
        releaseId: params.releaseId,
        filename: params.filename,
        expires: query.get('expires'),
        signature: query.get('signature'),
      });
      return new RawResponse(
        200,
        {
          'content-type': 'application/octet-stream',
          'content-disposition': `attachment; filename="${release.filename}"`,
          'x-checksum-sha256': release.sha256,
          'cache-control': 'private, max-age=300',
        },
        content,
      );
    },
  },
];
