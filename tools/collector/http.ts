// The few HTTP calls the collector makes, over the platform fetch.

export type Fetch = typeof fetch;

export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: T;
  text: string;
}

/** The request never got an answer: connection refused or reset, DNS, TLS, timeout. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
}

export interface RequestOptions {
  method?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is, with Content-Type: application/json unless `headers` name another. */
  raw?: string | Uint8Array;
  token?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
  fetch?: Fetch;
}

export async function request<T = any>(url: string, options: RequestOptions = {}): Promise<HttpResponse<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: string | Uint8Array | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.json !== undefined) body = JSON.stringify(options.json);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let res: Response;
  let text: string;
  try {
    res = await (options.fetch ?? fetch)(url, {
      method: options.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      body: body as BodyInit | undefined,
      signal,
    });
    text = await res.text();
  } catch (error) {
    const reason = timeout.aborted ? 'timed out' : describe(error);
    throw new TransportError(`${options.method ?? 'POST'} ${new URL(url).pathname}: ${reason}`, { cause: error });
  }
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** "fetch failed" says nothing; the cause (ECONNREFUSED, ENOTFOUND…) does. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return cause?.message ?? (error as Error)?.message ?? String(error);
}

/** The server's error text for a log line: `code: message`, or the start of the raw body. */
export function errorText(res: HttpResponse): string {
  const body = res.body as { error?: unknown; code?: unknown; message?: unknown } | undefined;
  if (body && typeof body === 'object') {
    const code = typeof body.code === 'string' ? body.code : typeof body.error === 'string' ? body.error : undefined;
    const message = typeof body.message === 'string' ? body.message : undefined;
    if (code || message) return [code, message].filter(Boolean).join(': ');
  }
  return `HTTP ${res.status}${res.text ? `: ${res.text.slice(0, 200)}` : ''}`;
}

/** http(s)://host/base → ws(s)://host/base/path. */
export function wsUrl(baseUrl: string, path: string): string {
  const url = new URL(joinUrl(baseUrl, path));
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

export function joinUrl(baseUrl: string, path: string): string {
  return baseUrl.replace(/\/+$/, '') + path;
}
