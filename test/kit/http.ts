import { request } from 'node:http';
import { openApiProblem } from './openapi-responses.js';

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * A JSON call as the SDK makes it: Content-Type: application/json even without a body, and a
 * body on GET when given (explore sends one), which fetch() cannot do.
 */
export function call<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const req = request(baseUrl + path, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          /* not JSON: the raw text is returned for the assertion to show */
        }
        const responseHeaders = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) responseHeaders.set(k, String(v));
        const status = res.statusCode ?? 0;
        const problem = documentedProblem(method, path, status, responseHeaders, body);
        if (problem) return reject(new Error(problem));
        resolve({ status, headers: responseHeaders, body: body as T });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Every answer of a documented path must be what the OpenAPI document says (test/kit/openapi-responses.ts). */
const isDocumented = (target: string) => /^\/(rest|search)\//.test(target);

function documentedProblem(method: string, target: string, status: number, headers: Headers, body: unknown): string | undefined {
  if (!isDocumented(target)) return undefined;
  return openApiProblem({ method, target, status, contentType: headers.get('content-type'), body });
}

/**
 * fetch() for the answers call() cannot give (bytes, a followed redirect, a form body), checked
 * against the OpenAPI document as call()'s are: the final answer's path, status and media type,
 * and its body when JSON.
 */
export async function fetchDocumented(url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, init);
  const type = res.headers.get('content-type');
  const body = type?.startsWith('application/json') ? await res.clone().json() : undefined;
  const { pathname, search } = new URL(res.url || url);
  const problem = documentedProblem(res.redirected ? 'GET' : (init.method ?? 'GET'), pathname + search, res.status, res.headers, body);
  if (problem) throw new Error(problem);
  return res;
}

export async function graphql<T = any>(
  baseUrl: string,
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
): Promise<{ data?: T; errors?: Array<{ message: string; extensions?: Record<string, any> }> }> {
  const res = await call(baseUrl, 'POST', '/graphql', { token, body: { query, variables } });
  return res.body;
}
