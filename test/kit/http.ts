export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A JSON call as the SDK makes it (Content-Type: application/json even without a body). */
export async function call<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const res = await fetch(baseUrl + path, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: the raw text is returned for the assertion to show */
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
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
