import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  Kind,
  type SelectionSetNode,
  getNamedType,
  isAbstractType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { RawResponse, type Route } from '../route.js';
import { type JsonSchema, leafSchema, orNull } from './json-schema.js';

/**
 * A route's answers, found by running its `render` on data shaped like its operation's result:
 * each leaf of that data is a Leaf carrying its field's schema, and whatever render makes of the
 * data (renamed, regrouped, passed through) is read back as a schema. Render is run once with
 * every field present and once more per nullable field set to null and per boolean set to false,
 * so each branch it takes on a value shows; the answers are merged.
 */

/** A scalar of the sample data; `''` wherever render turns it into text or bytes. */
class Leaf {
  constructor(
    readonly schema: JsonSchema,
    readonly optional: boolean,
  ) {}
  [Symbol.toPrimitive]() {
    return '';
  }
}

/** What a sample object or list is, for when render passes it through. */
interface Shape {
  nullable: boolean;
  optional: boolean;
  description?: string;
}

/** A field under @include/@skip left out of the data. */
const ABSENT = Symbol('absent');
type Branch = null | false | typeof ABSENT;

interface Sampler {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  shapes: WeakMap<object, Shape>;
  /** Every nullable field's and boolean leaf's path, filled by the first run. */
  branches: Map<string, Branch>;
  /** The paths given null, false or left out in this run; undefined in the first run. */
  overrides?: Map<string, Branch>;
}

export interface RouteResponse {
  status: number;
  /** Undefined when the answer has no body (a redirect). */
  contentType?: string;
  schema?: JsonSchema;
  headers: string[];
}

/** The answers a route gives on success, by status. */
export function routeResponses(schema: GraphQLSchema, route: Route): RouteResponse[] {
  const fragments = new Map(
    route.operation.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  const sampler: Sampler = { schema, fragments, shapes: new WeakMap(), branches: new Map() };
  const outputs = [run(sampler, route)];
  // Each branch alone, every boolean false at once, and each null or absence with every boolean false.
  const branches = [...sampler.branches];
  const allFalse = branches.filter(([, value]) => value === false);
  const runs = [...branches.map((b) => [b]), allFalse, ...branches.filter(([, value]) => value !== false).map((b) => [b, ...allFalse])];
  for (const overrides of runs) outputs.push(run({ ...sampler, overrides: new Map(overrides) }, route));
  const byStatus = new Map<number, RouteResponse>();
  for (const output of outputs) {
    if (output === undefined) continue; // render refuses this data (a 404 for a null result): an error, documented apart
    const response =
      output instanceof RawResponse
        ? rawResponse(output)
        : { status: route.status ?? 200, contentType: 'application/json', schema: schemaOf(output, sampler.shapes), headers: [] };
    const known = byStatus.get(response.status);
    if (!known) byStatus.set(response.status, response);
    else byStatus.set(response.status, mergeResponses(known, response));
  }
  // A row whose render takes none of the samples would be documented without a success: say so at once.
  if (byStatus.size === 0) throw new Error(`${route.method} ${route.path}: render refused every sample of its operation's data`);
  return [...byStatus.values()];
}

function run(sampler: Sampler, route: Route): unknown {
  const root = operationRoot(sampler.schema, route.operation);
  const data = sampleObject(sampler, root.selectionSet, root.type, '');
  try {
    return route.render(data);
  } catch {
    return undefined;
  }
}

function operationRoot(schema: GraphQLSchema, document: DocumentNode): { selectionSet: SelectionSetNode; type: GraphQLObjectType } {
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation || operation.kind !== Kind.OPERATION_DEFINITION) throw new Error('A route document holds no operation');
  const type = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  if (!type) throw new Error(`The schema has no ${operation.operation} type`);
  return { selectionSet: operation.selectionSet, type };
}

function sampleObject(sampler: Sampler, selectionSet: SelectionSetNode, type: GraphQLObjectType, path: string): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const { key, name, optional } of fieldsOf(sampler, selectionSet)) {
    const field = name === '__typename' ? undefined : type.getFields()[name];
    const at = `${path}.${key}`;
    if (optional) {
      if (sampler.overrides === undefined) sampler.branches.set(`${at}?`, ABSENT);
      else if (sampler.overrides.get(`${at}?`) === ABSENT) continue;
    }
    if (!field) {
      object[key] = new Leaf({ type: 'string' }, optional);
      continue;
    }
    const node = selectionOf(sampler, selectionSet, key);
    object[key] = sampleValue(sampler, field.type, node, at, { nullable: true, optional, description: field.description ?? undefined });
  }
  return object;
}

function sampleValue(sampler: Sampler, type: GraphQLOutputType, selection: SelectionSetNode | undefined, path: string, shape: Shape): unknown {
  if (isNonNullType(type)) return sampleValue(sampler, type.ofType, selection, path, { ...shape, nullable: false });
  if (shape.nullable) {
    if (sampler.overrides === undefined) sampler.branches.set(path, null);
    else if (sampler.overrides.get(path) === null) return null;
  }
  if (isListType(type)) {
    const list = [sampleValue(sampler, type.ofType, selection, path, { nullable: true, optional: false })];
    sampler.shapes.set(list, shape);
    return list;
  }
  if (isLeafType(type)) {
    const schema = leafSchema(type);
    if (schema.type === 'boolean') {
      if (sampler.overrides === undefined) sampler.branches.set(`${path}=false`, false);
      else if (sampler.overrides.get(`${path}=false`) === false) return false;
    }
    const described = shape.description ? { ...schema, description: shape.description } : schema;
    return new Leaf(shape.nullable ? orNull(described) : described, shape.optional);
  }
  const named = getNamedType(type);
  // Interfaces and unions are sampled as their first implementation: the routes select concrete fields.
  const object = isObjectType(named) ? named : isAbstractType(named) ? sampler.schema.getPossibleTypes(named)[0]! : undefined;
  if (!object || !selection) return new Leaf({}, shape.optional);
  const sample = sampleObject(sampler, selection, object, path);
  sampler.shapes.set(sample, shape);
  return sample;
}

/** The fields a selection set asks for, fragments spread, each by its response key. */
function fieldsOf(sampler: Sampler, selectionSet: SelectionSetNode, optional = false): Array<{ key: string; name: string; optional: boolean }> {
  return selectionSet.selections.flatMap((selection) => {
    const conditional = optional || (selection.directives ?? []).some((d) => d.name.value === 'include' || d.name.value === 'skip');
    if (selection.kind === Kind.FIELD) return [{ key: selection.alias?.value ?? selection.name.value, name: selection.name.value, optional: conditional }];
    const set = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : sampler.fragments.get(selection.name.value)?.selectionSet;
    return set ? fieldsOf(sampler, set, conditional) : [];
  });
}

/** The sub-selection of the field answered under `key`. */
function selectionOf(sampler: Sampler, selectionSet: SelectionSetNode, key: string): SelectionSetNode | undefined {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD && (selection.alias?.value ?? selection.name.value) === key) return selection.selectionSet;
    const set =
      selection.kind === Kind.INLINE_FRAGMENT
        ? selection.selectionSet
        : selection.kind === Kind.FRAGMENT_SPREAD
          ? sampler.fragments.get(selection.name.value)?.selectionSet
          : undefined;
    const found = set && selectionOf(sampler, set, key);
    if (found) return found;
  }
  return undefined;
}

/** What render made of the sample, as a schema. */
function schemaOf(value: unknown, shapes: WeakMap<object, Shape>): JsonSchema {
  if (value instanceof Leaf) return value.schema;
  if (value === null) return { type: 'null' };
  if (typeof value === 'string') return { type: 'string', const: value };
  if (typeof value === 'number') return { type: Number.isInteger(value) ? 'integer' : 'number' };
  if (typeof value === 'boolean') return { type: 'boolean' };
  if (typeof value !== 'object') return {};
  const shape = shapes.get(value);
  let schema: JsonSchema;
  if (Array.isArray(value)) {
    schema = value.length ? { type: 'array', items: value.map((v) => schemaOf(v, shapes)).reduce(mergeSchemas) } : { type: 'array' };
  } else {
    const entries = Object.entries(value);
    schema = {
      type: 'object',
      properties: Object.fromEntries(entries.map(([k, v]) => [k, schemaOf(v, shapes)])),
      required: entries.filter(([, v]) => !isOptional(v, shapes)).map(([k]) => k),
    };
  }
  if (shape?.description) schema.description = shape.description;
  return shape?.nullable ? orNull(schema) : schema;
}

const isOptional = (value: unknown, shapes: WeakMap<object, Shape>) =>
  value instanceof Leaf ? value.optional : typeof value === 'object' && value !== null && shapes.get(value)?.optional === true;

const typesOf = (schema: JsonSchema): unknown[] => (Array.isArray(schema.type) ? schema.type : [schema.type]);
const acceptsNull = (schema: JsonSchema) => schema.type === undefined || typesOf(schema).includes('null');

/** One schema for the answers of two runs: objects field by field (required in both), else either. */
export function mergeSchemas(a: JsonSchema, b: JsonSchema): JsonSchema {
  if (a === b) return a;
  if (b.type === 'null') return orNull(a);
  if (a.type === 'null') return orNull(b);
  if (typesOf(a).includes('object') && typesOf(b).includes('object') && a.properties && b.properties) {
    const pa = a.properties as Record<string, JsonSchema>;
    const pb = b.properties as Record<string, JsonSchema>;
    const keys = [...new Set([...Object.keys(pa), ...Object.keys(pb)])];
    const required = new Set(b.required as string[]);
    const merged: JsonSchema = {
      ...a,
      properties: Object.fromEntries(keys.map((k) => [k, pa[k] && pb[k] ? mergeSchemas(pa[k], pb[k]) : (pa[k] ?? pb[k])])),
      required: (a.required as string[]).filter((k) => required.has(k)),
    };
    return acceptsNull(b) ? orNull(merged) : merged;
  }
  if (typesOf(a).includes('array') && typesOf(b).includes('array')) {
    const items = a.items && b.items ? mergeSchemas(a.items as JsonSchema, b.items as JsonSchema) : (a.items ?? b.items);
    const merged: JsonSchema = { ...a, ...(items !== undefined && { items }) };
    return acceptsNull(b) ? orNull(merged) : merged;
  }
  // Leaves are compared whole (objects and lists above, field by field, so a merge stays linear in
  // their size); a literal read back (`false`) and the leaf it stands for differ only by the
  // leaf's description.
  if (JSON.stringify({ ...a, description: undefined }) === JSON.stringify({ ...b, description: undefined })) return a.description ? a : b;
  const anyOf = [...((a.anyOf as JsonSchema[] | undefined) ?? [a]), ...((b.anyOf as JsonSchema[] | undefined) ?? [b])];
  return { anyOf: anyOf.filter((s, i) => anyOf.findIndex((t) => JSON.stringify(t) === JSON.stringify(s)) === i) };
}

function rawResponse(raw: RawResponse): RouteResponse {
  const contentType = raw.headers['content-type']?.split(';')[0];
  const headers = Object.keys(raw.headers).filter((h) => h !== 'content-type');
  if (!contentType) return { status: raw.status, headers };
  const schema: JsonSchema =
    contentType === 'application/json' ? {} : contentType.startsWith('text/') ? { type: 'string' } : { type: 'string', contentMediaType: contentType };
  return { status: raw.status, contentType, schema, headers };
}

/** A JSON answer and a raw one of the same status: the JSON schema, with the raw one's headers. */
function mergeResponses(a: RouteResponse, b: RouteResponse): RouteResponse {
  const headers = [...new Set([...a.headers, ...b.headers])];
  if (a.contentType === b.contentType && a.schema && b.schema) {
    // A raw JSON answer carries no schema of its own ({}): it adds headers, not shapes.
    const schema = Object.keys(b.schema).length === 0 ? a.schema : Object.keys(a.schema).length === 0 ? b.schema : mergeSchemas(a.schema, b.schema);
    return { ...a, schema, headers };
  }
  return { ...a, headers };
}
