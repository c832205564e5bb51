/**
 * The benchmarks' HTTP client: node:http over kept-alive connections. It is the instrument, so it
 * should cost little: fetch (undici), timed beside it on the same server and alternated, took
 * 11 ms longer to the first byte of a 25,000-record page and ~65 ms longer to read its 63 MB
 * (WHATWG streams), and ~0.4 ms longer for a small answer (docs/search.md, session 7).
 */
import http from 'node:http';

export interface HttpAnswer {
  status: number;
  /** From sending the request until its status line and headers arrived. */
  firstByteMs: number;
  body: Buffer;
}

/** Connections stay open between requests, as an SDK keeps them. */
const agent = new http.Agent({ keepAlive: true });

export function postJson(url: string, body: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const sent = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } },
      (res) => {
        const firstByteMs = performance.now() - sent;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, firstByteMs, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
