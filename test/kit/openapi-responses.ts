import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../rest-compat/openapi/document.js';
import { routes, servedRoutes } from '../../rest-compat/routes.js';
import { schema } from '../../src/graphql/schema.js';

/**
 * Every answer a test receives from a documented /rest or /search path, checked against the
 * OpenAPI document the server serves (rest-compat/openapi/): its status must be documented for
 * that path and method, its media type the documented one, and a JSON body must fit the
 * documented schema. test/kit/http.ts calls this on every response, so each REST test is also a
 * contract test of the document.
 */

type OpenApi = ReturnType<typeof openApiDocument>;
interface ResponseObject {
  $ref?: string;
  content?: Record<string, { schema: unknown }>;
}

interface Checker {
  document: OpenApi;
  ajv: Ajv2020;
  templates: Array<{ pattern: RegExp; path: string }>;
  validators: Map<string, ValidateFunction>;
}

function openChecker(): Checker {
  const document = openApiDocument({ schema, routes, served: servedRoutes });
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  // Held as one schema so a response schema's $ref into components resolves; the document as a whole is no schema.
  ajv.addSchema(document, 'openapi', undefined, false);
  const templates = Object.keys(document.paths).map((path) => ({
    path,
    pattern: new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{[^/]+\}/g, '[^/]+')}$`),
  }));
  return { document, ajv, templates, validators: new Map() };
}

/**
 * Built when a test file loads (most of a second), not at its first request: so no test's own
 * clock around a request counts it.
 */
const checker = openChecker();

const pointer = (...segments: string[]) => segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export interface ReceivedResponse {
  method: string;
  /** The request target as sent, query string and all. */
  target: string;
  status: number;
  contentType: string | null;
  body: unknown;
}

/** What is wrong with a response by the document, or undefined when it fits or its path is not documented. */
export function openApiProblem(response: ReceivedResponse): string | undefined {
  const pathname = response.target.split('?')[0]!.replace(/(.)\/+$/, '$1');
  const method = (response.method === 'HEAD' ? 'GET' : response.method).toLowerCase();
  const template = checker.templates.find((t) => t.pattern.test(pathname));
  const operation = template && (checker.document.paths[template.path] as Record<string, { responses: Record<string, ResponseObject> }>)[method];
  if (!template || !operation) return undefined; // not a documented path and method: the router's own 404 or 405
  const where = `${response.method} ${pathname} → ${response.status}`;
  const key = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find((k) => operation.responses[k]);
  if (!key) return `${where}: the status is not in the OpenAPI document (it has ${Object.keys(operation.responses).join(', ')})`;
  let documented = operation.responses[key]!;
  let at = pointer('paths', template.path, method, 'responses', key);
  if (documented.$ref) {
    at = documented.$ref.slice(2);
    documented = checker.document.components.responses[documented.$ref.split('/').pop() as keyof OpenApi['components']['responses']];
  }
  const mediaType = response.contentType?.split(';')[0]?.trim() ?? null;
  if (!documented.content)
    return mediaType && response.method !== 'HEAD' && response.body !== undefined ? `${where}: a ${mediaType} body where the document has none` : undefined;
  if (!mediaType || !documented.content[mediaType])
    return `${where}: content type ${mediaType}, the document has ${Object.keys(documented.content).join(', ')}`;
  if (mediaType !== 'application/json' || response.method === 'HEAD') return undefined;
  const ref = `openapi#/${at}/${pointer('content', mediaType, 'schema')}`;
  let validate = checker.validators.get(ref);
  if (!validate) checker.validators.set(ref, (validate = checker.ajv.compile({ $ref: ref })));
  if (validate(response.body)) return undefined;
  const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  return `${where}: the body does not fit the OpenAPI document:\n  ${errors.join('\n  ')}\n  body: ${JSON.stringify(response.body).slice(0, 600)}`;
}
