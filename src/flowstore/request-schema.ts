/**
 * The values a search or terms request takes, as JSON Schema (2020-12, OpenAPI 3.1's dialect),
 * built from the limits the readers enforce (search-request.ts, terms.ts, time.ts, pql): the
 * OpenAPI document (rest-compat/openapi) states what these readers accept, and a changed limit
 * changes both. Every value may also be null or absent, which the readers take as its default.
 */
import { MAX_SENTENCE_LENGTH } from './pql/index.js';
import { MAX_FIELD_LENGTH, MAX_FIELDS, MAX_INSTANCES, MAX_SIZE, MAX_SORT_KEYS, MAX_TIMESERIES_BUCKETS } from './search-request.js';
import { MAX_TERMS_SIZE, TERMS_ORDER_BY } from './terms.js';
import { RELATIVE_UNITS } from './time.js';

/** A JSON Schema as plain data. */
export type RequestSchema = { [key: string]: unknown };

const nullable = (schema: RequestSchema, description: string): RequestSchema => ({ ...schema, type: [schema.type, 'null'], description });

/** `asc` or `desc` in any case (readDirection). */
const DIRECTION: RequestSchema = { type: 'string', pattern: '^(?:[aA][sS][cC]|[dD][eE][sS][cC])$' };

/** `count`, `sum|avg|min|max:<numeric field>` or `uniq:<field>` (readMetric). */
const METRIC: RequestSchema = { type: 'string', pattern: '^(?:count|(?:sum|avg|min|max|uniq):.+)$' };

const closedObject = (properties: Record<string, RequestSchema>, required: string[] = []): RequestSchema => ({
  type: 'object',
  properties,
  ...(required.length && { required }),
  additionalProperties: false,
});

/** A DateTimeFilter (wire.md 5.2, resolveDateTimeFilter): exactly one of its three forms. */
const dateTimeFilter = (description: string): RequestSchema => ({
  description,
  oneOf: [
    { type: 'null' },
    closedObject({ now: { const: true } }, ['now']),
    closedObject(
      { relative: closedObject({ value: { type: 'integer', minimum: 1 }, unit: { type: 'string', enum: [...RELATIVE_UNITS] } }, ['value', 'unit']) },
      ['relative'],
    ),
    closedObject({ absolute: closedObject({ date: { type: 'string', description: 'ISO 8601, e.g. `2025-01-15T12:30:00Z`; zone-less is UTC' } }, ['date']) }, [
      'absolute',
    ]),
  ],
});

/** What both bodies share (CommonRequest), but for the caller's own `module`. */
export const COMMON_REQUEST_SCHEMAS: Record<'instance_ids' | 'sentence' | 'start' | 'end', RequestSchema> = {
  instance_ids: {
    type: 'array',
    items: { type: 'string', minLength: 1 },
    minItems: 1,
    maxItems: MAX_INSTANCES,
    description: 'The tenants (instances) to search, each one the token may see',
  },
  sentence: nullable({ type: 'string', maxLength: MAX_SENTENCE_LENGTH }, 'A query-language sentence (docs/search.md); absent or null matches every flow'),
  start: dateTimeFilter('Where the window starts; default 15 minutes before `end`'),
  end: dateTimeFilter('Where the window ends; default now'),
};

/** The rest of a records request (SearchRequest). */
export const RECORDS_REQUEST_SCHEMAS: Record<'sort' | 'fields' | 'size' | 'page' | 'timeseries', RequestSchema> = {
  sort: nullable(
    { type: 'array', maxItems: MAX_SORT_KEYS, items: closedObject({ field: { type: 'string' }, order: DIRECTION }, ['field']) },
    'Sort keys applied in order, each a sortable field and `asc` or `desc` (default desc); default `@timestamp` desc',
  ),
  fields: nullable(
    { type: 'array', maxItems: MAX_FIELDS, items: { type: 'string', minLength: 1, maxLength: MAX_FIELD_LENGTH, pattern: '^[^*]*$' } },
    'Dotted paths or prefixes to return; default every field',
  ),
  size: nullable({ type: 'integer', minimum: 0, maximum: MAX_SIZE }, 'Records per page (default 15); 0 only together with `timeseries`'),
  page: nullable({ type: 'integer', minimum: 0 }, 'The page, from 0'),
  timeseries: nullable(
    closedObject(
      { interval: { type: 'string', pattern: '^[1-9][0-9]{0,5}[smhdw]$' }, metric: { ...METRIC, description: 'As a terms metric; default count' } },
      ['interval'],
    ),
    `Buckets of \`interval\` (\`30s\`, \`5m\`, \`1h\`, \`1d\`, \`1w\`; at most ${MAX_TIMESERIES_BUCKETS} in the window), each with the flow count and the metric`,
  ),
};

/** The rest of a terms request (TermsRequest). */
export const TERMS_REQUEST_SCHEMAS: Record<'field' | 'size' | 'metric' | 'order', RequestSchema> = {
  field: { type: 'string', description: 'The filterable dotted path (or alias) whose values are counted' },
  size: nullable({ type: 'integer', minimum: 1, maximum: MAX_TERMS_SIZE }, 'Buckets per instance; default 10'),
  metric: nullable(METRIC, 'The value computed per bucket: `count` (default), `sum|avg|min|max:<numeric field>` or `uniq:<field>`'),
  order: nullable(
    closedObject({ by: { type: 'string', enum: [...TERMS_ORDER_BY] }, direction: DIRECTION }),
    'Bucket order: by `doc_count` (default), `value` or `key`, `asc` or `desc`',
  ),
};
