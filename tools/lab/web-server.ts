// The lab internet's web sites: one process serving HTTP on :80 and HTTPS on :443 of every address
// it is given (inside the internet namespace). GET /bytes/N answers N bytes (a download, at most
// 1 GiB); a POST or PUT is read to its end and answered with the count (an upload sink); any other
// GET a small page. Run as `tsx web-server.ts CERT KEY ADDRESS...`; prints "ready" once listening.

import { readFileSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer as createHttp } from 'node:http';
import { createServer as createHttps } from 'node:https';

const MAX_DOWNLOAD = 1024 ** 3;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'POST' || req.method === 'PUT') {
    let received = 0;
    req.on('data', (d: Buffer) => (received += d.length));
    req.on('end', () => res.end(JSON.stringify({ received })));
    return;
  }
  const size = /^\/bytes\/(\d+)$/.exec(req.url ?? '')?.[1];
  if (size === undefined) {
    res.setHeader('content-type', 'text/html');
    res.end(`<html><body><h1>${req.headers.host ?? 'lab'}</h1><p>${'lorem ipsum '.repeat(200)}</p></body></html>`);
    return;
  }
  let left = Math.min(Number(size), MAX_DOWNLOAD);
  res.setHeader('content-length', String(left));
  const pump = () => {
    while (left > 0) {
      const part = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= part.length;
      if (!res.write(part)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
}

const [cert, key, ...addresses] = process.argv.slice(2);
if (!cert || !key || addresses.length === 0) {
  process.stderr.write('usage: web-server.ts CERT KEY ADDRESS...\n');
  process.exit(2);
}
const tls = { cert: readFileSync(cert), key: readFileSync(key) };
const listening: Promise<void>[] = [];
for (const address of addresses) {
  for (const server of [createHttp(handle).listen(80, address), createHttps(tls, handle).listen(443, address)]) {
    listening.push(new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject)));
  }
}
Promise.all(listening).then(
  () => console.log('ready'),
  (error: Error) => {
    console.error(error.message);
    process.exit(1);
  },
);
