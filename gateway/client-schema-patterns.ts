import { RE2JS } from 're2js';
import { isJsonObject } from '../core/json-object.ts';

/**
 * A client's JSON Schema regular expressions, kept off JavaScript's backtracking engine.
 *
 * `pattern` and `patternProperties` in a request's `tools` are the client's text, and checking a
 * field against `^(a+)+$` with `RegExp` takes exponential time in the field's length: one request
 * could hold the event loop, and every other request on it, for minutes. So the schema is handed
 * to zod without them, and `pattern` is checked here with RE2's linear-time engine (re2js) along
 * the paths a value's place in the schema is certain on: `properties`, `items`, `prefixItems` and
 * `allOf`. A pattern under `anyOf`/`oneOf`/`$ref`, one RE2 cannot read (lookaround,
 * backreferences) and `patternProperties` are left to the client, as without validation: the
 * gateway never refuses what the schema allows.
 */
export interface SchemaPatterns {
  /** The schema without `pattern` and `patternProperties`, for zod. */
  schema: unknown;
  /** The first value on a checked path that does not match its pattern, worded as zod words errors; undefined if none. */
  check(value: unknown): string | undefined;
}

export function splitPatterns(schema: unknown): SchemaPatterns {
  return { schema: withoutPatterns(schema), check: (value) => firstMismatch(schema, value, []) };
}

/** Keywords whose value is one subschema. */
const ONE_SCHEMA = new Set(['additionalProperties', 'additionalItems', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems']);
/** Keywords whose value is an array of subschemas (`items` too, in drafts before 2020-12). */
const SCHEMA_LIST = new Set(['items', 'prefixItems', 'allOf', 'anyOf', 'oneOf']);
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP = new Set(['properties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

function withoutPatterns(schema: unknown): unknown {
  if (!isJsonObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'pattern' && typeof value === 'string') continue;
    if (key === 'patternProperties') continue;
    if (ONE_SCHEMA.has(key)) out[key] = withoutPatterns(value);
    else if (SCHEMA_LIST.has(key)) out[key] = Array.isArray(value) ? value.map(withoutPatterns) : withoutPatterns(value);
    else if (SCHEMA_MAP.has(key) && isJsonObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutPatterns(sub)]));
    else out[key] = value;
  }
  // The keys patternProperties described are no longer known to the schema: let them through.
  if ('patternProperties' in schema) delete out.additionalProperties;
  return out;
}

function firstMismatch(schema: unknown, value: unknown, path: Array<string | number>): string | undefined {
  if (!isJsonObject(schema)) return undefined;
  if (typeof value === 'string' && typeof schema.pattern === 'string') {
    const regex = compiled(schema.pattern);
    if (regex !== null && !regex.matcher(value).find()) {
      return `✖ Invalid string: must match pattern /${schema.pattern}/${path.length > 0 ? `\n  → at ${path.join('.')}` : ''}`;
    }
  }
  if (Array.isArray(schema.allOf)) {
    for (const sub of schema.allOf) {
      const found = firstMismatch(sub, value, path);
      if (found) return found;
    }
  }
  if (isJsonObject(value) && isJsonObject(schema.properties)) {
    for (const [key, sub] of Object.entries(schema.properties)) {
      if (!Object.hasOwn(value, key)) continue;
      const found = firstMismatch(sub, value[key], [...path, key]);
      if (found) return found;
    }
  }
  if (Array.isArray(value)) {
    const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
    for (let i = 0; i < value.length; i++) {
      const sub = i < tuple.length ? tuple[i] : Array.isArray(schema.items) ? undefined : schema.items;
      const found = firstMismatch(sub, value[i], [...path, i]);
      if (found) return found;
    }
  }
  return undefined;
}

/** Compiled once per pattern text (a request's schemas are checked field after field); null: RE2 cannot read it. */
const cache = new Map<string, RE2JS | null>();
const CACHE_LIMIT = 1024;

function compiled(pattern: string): RE2JS | null {
  let regex = cache.get(pattern);
  if (regex !== undefined) return regex;
  try {
    regex = RE2JS.compile(pattern);
  } catch {
    regex = null;
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(pattern, regex);
  return regex;
}
