import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError, authenticationError, missingFields } from '../../errors.js';
import { NATIVE_BATCH_CONTENT_TYPE } from '../../flowstore/native-batch.js';
import { sendError } from '../../http/errors.js';
import { readBody, sendJson } from '../../http/kit.js';
import type { HttpRoute } from '../../http/routes.js';
import type { Logger } from '../../infra/logger.js';
import type { Services } from '../../services.js';
import { MAX_WIRE_BYTES } from './ingest-limits.js';
import { RETRY_AFTER_SECONDS } from './ingest.service.js';
import type { BatchEncoding } from './ingest-workers.protocol.js';

export const INGEST_PATH = '/collector/ingest/1.0/flows';

/**
 * The collector's ingest endpoint. Not a documented REST path, so not a rest-compat row: a
 * collector protocol endpoint like the control channel, with larger (optionally gzipped) bodies.
 * Its requests are logged at debug level: collectors' batches are summed up per node instead
 * (ingest.activity.ts).
 */
export const ingestRoute = (services: Services, logger: Logger): HttpRoute => ({
  paths: [INGEST_PATH],
  serve: (req, res) => serveIngest(req, res, services, logger),
  requestLog: 'debug',
});

async function serveIngest(req: IncomingMessage, res: ServerResponse, services: Services, logger: Logger): Promise<void> {
  try {
    if (req.method !== 'POST') throw new DomainError(405, 'method_not_allowed', `Use POST on ${INGEST_PATH}`);
    const session = await services.auth.authenticate(req.headers.authorization);
    if (!session) throw authenticationError('missing_token', 'Authentication required');
    const encoding = batchEncoding(req);
    services.ingest.assertRoom();
    const body = await readBody(req, MAX_WIRE_BYTES);
    const outcome = await services.ingest.ingest(session, body, encoding);
    services.ingest.activity.accepted(outcome.nodeId, outcome.accepted, outcome.rejected.length);
    sendJson(res, 200, { batch_id: outcome.batchId, node_id: outcome.nodeId, accepted: outcome.accepted, rejected: outcome.rejected });
  } catch (error) {
    if (error instanceof DomainError) {
      services.ingest.activity.refused(error.code);
      return sendError(res, error);
    }
    services.ingest.activity.refused('store_unavailable');
    logger.error('ingest.unhandled_error', { error });
    sendError(
      res,
      new DomainError(503, 'store_unavailable', 'Ingest failed; retry the same batch', { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } }),
    );
  }
}

/**
 * How the body is sent: gzip or not, and JSON unless the content type asks for a Native block
 * (docs/collector-protocol.md 4.1), whose batch and node ids are headers.
 */
function batchEncoding(req: IncomingMessage): BatchEncoding {
  const gzip = (req.headers['content-encoding'] ?? '').toLowerCase() === 'gzip';
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== NATIVE_BATCH_CONTENT_TYPE) return { gzip, format: 'json' };
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const batchId = header('x-batch-id');
  if (batchId === undefined) throw missingFields(['X-Batch-Id']);
  return { gzip, format: 'native', batch_id: batchId, node_id: header('x-node-id') };
}
