/**
 * The REST edge of flow search: the snake_case bodies of POST /search/records/1.0 and
 * /search/agg/1.0 (wire.md 5.1, docs/search.md) read into the flow store's typed requests. Only
 * what must be refused before authorization is checked here (the body's shape, `module`, the
 * instance ids); every other value goes on as sent, for the flow store to check after it.
 */
import {
  COMMON_REQUEST_SCHEMAS,
  RECORDS_REQUEST_SCHEMAS,
  TERMS_REQUEST_SCHEMAS,
  excerpt,
  type RequestSchema,
  type SearchRequest,
  type TermsRequest,
} from '../../flowstore/index.js';
import { invalid, readInstanceIds } from './search.service.js';

/** A body as documented (rest-compat/openapi): its fields, the required ones, no others. */
export interface BodySchema extends RequestSchema {
  type: 'object';
  properties: Record<string, RequestSchema>;
  required: string[];
  additionalProperties: false;
}

/** A body's schema, and the refusal of a body without each required field, in the order they are checked. */
interface BodyRules {
  schema: BodySchema;
  missing: Record<string, string>;
}

/** `module` names the data set; `flows` is the only one. */
const MODULE: RequestSchema = { type: 'string', const: 'flows', description: 'The data set searched: `flows`' };
/** In the order the spec lists them, which a refused unknown key's message repeats. */
const { instance_ids, ...filters } = COMMON_REQUEST_SCHEMAS;
const COMMON_PROPERTIES = { instance_ids, module: MODULE, ...filters };
const COMMON_REQUIRED = { module: "module is required and must be 'flows'", instance_ids: 'instance_ids is required' };

const bodyRules = (properties: Record<string, RequestSchema>, missing: Record<string, string>): BodyRules => ({
  schema: { type: 'object', properties, required: Object.keys(missing), additionalProperties: false },
  missing,
});

/** The body of POST /search/records/1.0 (api-spec.md Search, wire.md 5.1, plus our `timeseries`). */
export const RECORDS_BODY = bodyRules({ ...COMMON_PROPERTIES, ...RECORDS_REQUEST_SCHEMAS }, COMMON_REQUIRED);
/** The body of POST /search/agg/1.0 (our design, docs/search.md). */
export const TERMS_BODY = bodyRules(
  { ...COMMON_PROPERTIES, ...TERMS_REQUEST_SCHEMAS },
  { ...COMMON_REQUIRED, field: 'field is required: the dotted path to aggregate on' },
);

type Body = Record<string, unknown>;

function isObject(v: unknown): v is Body {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What both bodies share: an object of the schema's keys, each required one present, `module: "flows"`, and instance ids. */
function readBody(body: unknown, { schema, missing }: BodyRules): { body: Body; customerIds: string[] } {
  if (!isObject(body)) throw invalid('body', 'The request body must be a JSON object');
  const keys = Object.keys(schema.properties);
  const unknown = Object.keys(body).filter((k) => !keys.includes(k));
  if (unknown.length) throw invalid(excerpt(unknown[0]!), `Unknown field '${excerpt(unknown[0]!)}'; the body may have ${keys.join(', ')}`);
  const absent = schema.required.find((k) => body[k] === undefined || body[k] === null);
  if (absent) throw invalid(absent, missing[absent]!);
  if (body.module !== 'flows') throw invalid('module', "module must be 'flows'");
  return { body, customerIds: readInstanceIds(body.instance_ids) };
}

/** An optional object-valued body field: absent or null is fine, anything but an object is a 400. */
function optionalObject(body: Body, field: string): Body | undefined {
  const v = body[field];
  if (v !== undefined && v !== null && !isObject(v)) throw invalid(field, `${field} must be an object`);
  return v ?? undefined;
}

/** The body of POST /search/records/1.0 as the flow store's records request. */
export function readRecordsBody(input: unknown): SearchRequest {
  const { body, customerIds } = readBody(input, RECORDS_BODY);
  return {
    customerIds,
    sentence: body.sentence,
    start: body.start,
    end: body.end,
    sort: body.sort,
    fields: body.fields,
    size: body.size,
    page: body.page,
    timeseries: optionalObject(body, 'timeseries'),
  };
}

/** The body of POST /search/agg/1.0 as the flow store's terms request. */
export function readTermsBody(input: unknown): TermsRequest {
  const { body, customerIds } = readBody(input, TERMS_BODY);
  const { field, size } = body;
  if (typeof field !== 'string') throw invalid('field', 'field must be a string');
  if (size !== undefined && size !== null && typeof size !== 'number') throw invalid('size', 'size must be an integer between 1 and 1000');
  return {
    customerIds,
    sentence: body.sentence,
    start: body.start,
    end: body.end,
    field,
    size: size ?? undefined,
    metric: body.metric,
    order: optionalObject(body, 'order'),
  };
}
