import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { checkTarget, guardedLookup } from './targets.js';

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  allowPrivate: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface WebhookResponse {
  status: number;
  /** The first bytes of the receiver's answer, for the run history. */
  excerpt: string;
  durationMs: number;
}

const EXCERPT_BYTES = 512;

/**
 * POSTs one signed body. Redirects are not followed (a 3xx is the answer), the connection goes
 * only to addresses the guarded lookup accepted, and the whole exchange has one deadline.
 * Throws TargetRefused, or the transport error (timeouts and aborts included).
 */
export async function postWebhook(req: WebhookRequest): Promise<WebhookResponse> {
  const url = new URL(req.url);
  // The guarded lookup never runs for an IP-literal host: check those here.
  if (isIP(url.hostname.replace(/^\[(.*)\]$/, '$1'))) await checkTarget(url, req.allowPrivate);
  const started = performance.now();
  const signal = req.signal ? AbortSignal.any([req.signal, AbortSignal.timeout(req.timeoutMs)]) : AbortSignal.timeout(req.timeoutMs);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<WebhookResponse>((resolve, reject) => {
    const outgoing = send(
      url,
      {
        method: 'POST',
        headers: { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) },
        lookup: guardedLookup(req.allowPrivate),
        agent: false,
        signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          resolve({
            status: res.statusCode ?? 0,
            excerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8'),
            durationMs: Math.round(performance.now() - started),
          });
          res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          if (size < EXCERPT_BYTES) chunks.push(chunk);
          size += chunk.length;
          // The status is what counts; a receiver streaming a large answer is not waited for.
          if (size >= EXCERPT_BYTES) done();
        });
        res.on('end', done);
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}
