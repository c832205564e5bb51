import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { flatError } from '../../../rest-compat/errors.js';
import { parseBody, readBody, sendJson, tooLarge } from '../../../rest-compat/http.js';
import { DomainError, authenticationError } from '../../errors.js';
import type { Logger } from '../../infra/logger.js';
import type { Services } from '../../services.js';
import { RETRY_AFTER_SECONDS } from './ingest.service.js';

export const INGEST_PATH = '/collector/ingest/1.0/flows';
const MAX_WIRE_BYTES = 16 * 1024 * 1024;
const MAX_JSON_BYTES = 64 * 1024 * 1024;
const gunzipAsync = promisify(gunzip);

/**
 * The collector's ingest endpoint. Not a documented REST path, so not a rest-compat row: a
 * collector protocol endpoint like the control channel, with larger (optionally gzipped) bodies.
 */
export async function serveIngest(req: IncomingMessage, res: ServerResponse, services: Services, logger: Logger): Promise<void> {
  try {
    if (req.method !== 'POST') throw new DomainError(405, 'method_not_allowed', `Use POST on ${INGEST_PATH}`);
    const session = await services.auth.authenticate(req.headers.authorization);
    if (!session) throw authenticationError('missing_token', 'Authentication required');
    services.ingest.assertRoom();
    let raw = await readBody(req, MAX_WIRE_BYTES);
    if ((req.headers['content-encoding'] ?? '').toLowerCase() === 'gzip') {
      try {
        raw = await gunzipAsync(raw, { maxOutputLength: MAX_JSON_BYTES });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(MAX_JSON_BYTES);
        throw new DomainError(400, 'invalid_encoding', 'Request body is not valid gzip');
      }
    }
    const outcome = await services.ingest.ingest(session, parseBody(raw, 'application/json'));
    services.ingest.activity.accepted(outcome.nodeId, outcome.accepted, outcome.rejected.length);
    sendJson(res, 200, { batch_id: outcome.batchId, node_id: outcome.nodeId, accepted: outcome.accepted, rejected: outcome.rejected });
  } catch (error) {
    if (error instanceof DomainError) {
      services.ingest.activity.refused(error.code);
      const { status, body } = flatError(error);
      return sendJson(res, status, body, error.headers);
    }
    services.ingest.activity.refused('store_unavailable');
    logger.error('ingest.unhandled_error', { error });
    sendJson(res, 503, { error: 'store_unavailable', code: 'store_unavailable', message: 'Ingest failed; retry the same batch' }, {
      'retry-after': String(RETRY_AFTER_SECONDS),
    });
  }
}
