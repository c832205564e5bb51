/**
 * The REST edge of flow search: the snake_case bodies of POST /search/records/1.0 and
 * /search/agg/1.0 (wire.md 5.1, docs/search.md) read into the flow store's typed requests. Only
 * what must be refused before authorization is checked here (the body's shape, `module`, the
 * instance ids); every other value goes on as sent, for the flow store to check after it.
 */
import { excerpt, type SearchRequest, type TermsRequest } from '../../flowstore/index.js';
import { invalid, readInstanceIds } from './search.service.js';

/** Body keys of POST /search/records/1.0 (api-spec.md Search, wire.md 5.1, plus our `timeseries`). */
export const RECORDS_KEYS = ['instance_ids', 'module', 'sentence', 'start', 'end', 'sort', 'fields', 'size', 'page', 'timeseries'] as const;
/** Body keys of POST /search/agg/1.0 (our design, docs/search.md). */
export const TERMS_KEYS = ['instance_ids', 'module', 'sentence', 'start', 'end', 'field', 'size', 'metric', 'order'] as const;

type Body = Record<string, unknown>;

function isObject(v: unknown): v is Body {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What both bodies share: an object of known keys, `module: "flows"`, and instance ids. */
function readBody(body: unknown, keys: readonly string[]): { body: Body; customerIds: string[] } {
  if (!isObject(body)) throw invalid('body', 'The request body must be a JSON object');
  const unknown = Object.keys(body).filter((k) => !keys.includes(k));
  if (unknown.length) throw invalid(excerpt(unknown[0]!), `Unknown field '${excerpt(unknown[0]!)}'; the body may have ${keys.join(', ')}`);
  if (body.module === undefined || body.module === null) throw invalid('module', "module is required and must be 'flows'");
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
  const { body, customerIds } = readBody(input, RECORDS_KEYS);
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
  const { body, customerIds } = readBody(input, TERMS_KEYS);
  const { field, size } = body;
  if (field === undefined || field === null) throw invalid('field', 'field is required: the dotted path to aggregate on');
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
