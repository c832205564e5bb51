// A small stand-in for the service in the collector's tests: the token endpoint, ingest, the
// device flow and the control channel, each with a hook to misbehave.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { WebSocketServer, type WebSocket } from 'ws';
import { NATIVE_CONTENT_TYPE, decodeNativeBatch } from '../native-batch.js';

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Drop the connection without answering. */
  destroy?: boolean;
}

export interface IngestCall {
  batch_id: string;
  /** JSON `node_id`, or a Native batch's X-Node-Id. */
  node_id?: string;
  /** Content-Encoding of the request. */
  encoding?: string;
  /** Content-Type of the request. */
  contentType?: string;
  /** The body as received (gzipped when it was). */
  raw: Buffer;
  flows: unknown[];
  /** Index of the attempt in all ingest calls. */
  n: number;
}

export interface FakeServiceOptions {
  customerId?: string;
  tokenTtlS?: number;
  /** Accepted access keys; default: any. */
  keys?: string[];
  heartbeatIntervalS?: number;
  nodeId?: string;
  /** Overrides the answer to an ingest call; undefined = store it (once per batch_id). */
  ingest?: (call: IngestCall) => Reply | undefined | Promise<Reply | undefined>;
  /** Answers device start and poll; default 404. */
  device?: (path: string, body: any) => Reply;
  /** Extra GET routes (e.g. a release download). */
  files?: Record<string, Buffer>;
  /** What to do with a hello: default welcome. */
  onHello?: (hello: any, ws: WebSocket) => 'welcome' | 'ignore';
}

export interface FakeService {
  url: string;
  tokensIssued: string[];
  ingestCalls: IngestCall[];
  /** Flows stored, by batch id (a retried batch is stored once). */
  stored: Map<string, unknown[]>;
  hellos: any[];
  heartbeats: any[];
  sockets: WebSocket[];
  /** The open channel, if any. */
  current(): WebSocket | undefined;
  command(name: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<any>;
  storedFlows(): number;
  close(): Promise<void>;
}

function fakeJwt(payload: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.${Buffer.from('signature-for-tests').toString('base64url')}`;
}

async function readBody(req: IncomingMessage): Promise<{ raw: Buffer; body: any }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const plain = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
  if (req.headers['content-type'] === NATIVE_CONTENT_TYPE) {
    // As the service reads one: the block's records, the batch's ids from the headers.
    return { raw, body: { batch_id: req.headers['x-batch-id'], node_id: req.headers['x-node-id'], flows: decodeNativeBatch(plain) } };
  }
  const text = plain.toString('utf8');
  try {
    return { raw, body: text ? JSON.parse(text) : undefined };
  } catch {
    return { raw, body: text };
  }
}

function send(res: ServerResponse, reply: Reply): void {
  if (reply.destroy) return void res.socket?.destroy();
  res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
  res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
}

export async function startFakeService(options: FakeServiceOptions = {}): Promise<FakeService> {
  const customerId = options.customerId ?? 'cust_fake';
  const tokensIssued: string[] = [];
  const ingestCalls: IngestCall[] = [];
  const stored = new Map<string, unknown[]>();
  const hellos: any[] = [];
  const heartbeats: any[] = [];
  const sockets: WebSocket[] = [];
  const waiting = new Map<string, (result: any) => void>();
  let commandSeq = 0;

  const authorized = (req: IncomingMessage) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    return token !== undefined && tokensIssued.includes(token);
  };

  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    let raw: Buffer;
    let body: any;
    try {
      ({ raw, body } = await readBody(req));
    } catch (error) {
      return send(res, { status: 400, body: { error: 'invalid_request', message: (error as Error).message } });
    }
    if (req.method === 'GET' && options.files?.[path]) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return void res.end(options.files[path]);
    }
    if (path === '/rest/oauth2/token/1.0') {
      const key = `${body?.client_id}.${body?.client_secret}`;
      if (!body?.client_id || !body?.client_secret || (options.keys && !options.keys.includes(key))) {
        return send(res, { status: 401, body: { error: 'Invalid credentials', code: 'invalid_credentials' } });
      }
      const ttl = options.tokenTtlS ?? 3600;
      const exp = Math.floor(Date.now() / 1000) + ttl;
      const token = fakeJwt({ aud: customerId, sub: body.client_id, scopes: ['p.token.scope.ingest'], exp, n: tokensIssued.length });
      tokensIssued.push(token);
      return send(res, { status: 200, body: { access_token: token, expires_in: ttl, expires_at: exp, token_type: 'Bearer' } });
    }
    if (path === '/collector/ingest/1.0/flows') {
      if (!authorized(req)) return send(res, { status: 401, body: { error: 'authentication_error' } });
      const call: IngestCall = {
        batch_id: body.batch_id,
        node_id: body.node_id,
        flows: body.flows,
        n: ingestCalls.length,
        encoding: req.headers['content-encoding'],
        contentType: req.headers['content-type'],
        raw,
      };
      ingestCalls.push(call);
      const override = await options.ingest?.(call);
      if (override) return send(res, override);
      if (!stored.has(call.batch_id)) stored.set(call.batch_id, call.flows);
      return send(res, { status: 200, body: { batch_id: call.batch_id, accepted: call.flows.length, rejected: [] } });
    }
    if (path.startsWith('/rest/oauth2/device/') && options.device) return send(res, options.device(path, body));
    send(res, { status: 404, body: { error: 'not_found' } });
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/collector/control/1.0' || !authorized(req)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.push(ws);
      ws.on('message', (raw) => {
        const message = JSON.parse(raw.toString());
        if (message.type === 'hello') {
          hellos.push(message);
          if ((options.onHello?.(message, ws) ?? 'welcome') === 'welcome') {
            ws.send(
              JSON.stringify({
                type: 'welcome',
                node_id: options.nodeId ?? 'node_fake',
                status: 'active',
                heartbeat_interval_s: options.heartbeatIntervalS ?? 15,
                config: { profile_id: null, update_channel: 'stable', services: {} },
              }),
            );
          }
        } else if (message.type === 'heartbeat') heartbeats.push(message);
        else if (message.type === 'result') waiting.get(message.id)?.(message);
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const current = () => [...sockets].reverse().find((ws) => ws.readyState === ws.OPEN);

  return {
    url,
    tokensIssued,
    ingestCalls,
    stored,
    hellos,
    heartbeats,
    sockets,
    current,
    storedFlows: () => [...stored.values()].reduce((n, flows) => n + flows.length, 0),
    command(name, args = {}, timeoutMs = 20_000) {
      const ws = current();
      if (!ws) return Promise.reject(new Error('no open channel'));
      const id = `cmd_${++commandSeq}`;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no result for ${name}`)), timeoutMs);
        waiting.set(id, (result) => {
          clearTimeout(timer);
          resolve(result);
        });
        ws.send(JSON.stringify({ type: 'command', id, name, args, deadline_ms: Date.now() + timeoutMs }));
      });
    },
    async close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls until check() is truthy. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A loopback URL nothing listens on (port 1 will not do: fetch refuses it as a "bad port"). */
export async function closedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
