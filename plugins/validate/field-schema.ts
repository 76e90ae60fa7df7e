import type { z } from 'zod';

/** What a JSON path leads to inside an arguments schema. */
export type FieldSchema =
  | { kind: 'schema'; schema: z.ZodType }
  /** The object at this level is strict and has no such key. */
  | { kind: 'unknown-key'; key: string }
  /** The schema cannot tell in isolation (a union, a lazy schema…): the whole-call check decides. */
  | { kind: 'unresolved' };

interface Def {
  type: string;
  innerType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  valueType?: z.ZodType;
  in?: z.ZodType;
}

const def = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Wrappers that do not change what a present value must look like. */
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** `schema` without its WRAPPERS and pipes (their input side); a `.catch` is kept unless `throughCatch`. */
function unwrapped(schema: z.ZodType, throughCatch: boolean): z.ZodType {
  for (let d = def(schema); (WRAPPERS.has(d.type) && (throughCatch || d.type !== 'catch')) || d.type === 'pipe'; d = def(schema)) {
    schema = (d.type === 'pipe' ? d.in : d.innerType) as z.ZodType;
  }
  return schema;
}

/**
 * The schema a value at `path` must satisfy, walking zod 4 objects, arrays, tuples and records
 * (through optional/default/… wrappers and the input side of transforms).
 *
 * @example
 * fieldSchemaAt(z.object({ stops: z.array(z.object({ city: z.string() })) }), ['stops', 0, 'city']) // { kind: 'schema', schema: z.string() }
 */
export function fieldSchemaAt(root: z.ZodType, path: ReadonlyArray<string | number>): FieldSchema {
  let schema = root;
  for (const key of path) {
    schema = unwrapped(schema, false);
    const d = def(schema);
    // `.catch(fallback)` turns an invalid value into the fallback, whatever inside it failed:
    // a part of it cannot make the call invalid, and the whole value is checked when it closes.
    if (d.type === 'catch') return { kind: 'unresolved' };
    let next: z.ZodType | undefined;
    if (d.type === 'object' && typeof key === 'string') {
      next = Object.hasOwn(d.shape ?? {}, key) ? d.shape![key] : d.catchall;
      if (next === undefined) return { kind: 'unresolved' }; // z.object strips unknown keys: not an error
      if (def(next).type === 'never') return { kind: 'unknown-key', key };
    } else if (d.type === 'array' && typeof key === 'number') next = d.element;
    else if (d.type === 'tuple' && typeof key === 'number') next = d.items?.[key] ?? d.rest ?? undefined;
    else if (d.type === 'record' && typeof key === 'string') next = d.valueType;
    if (next === undefined) return { kind: 'unresolved' };
    schema = next;
  }
  return { kind: 'schema', schema };
}

/** `stops[0].city` for messages. */
export function fieldLabel(path: ReadonlyArray<string | number>): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? key : `.${key}`)).join('');
}

/** `stops.*.city`: the key refinements are registered under (array indices are `*`). */
export function refinementKey(path: ReadonlyArray<string | number>): string {
  return path.map((key) => (typeof key === 'number' ? '*' : key)).join('.');
}

/**
 * Why a refinement's key (`stops.*.city`) can never match a field of `root`, or undefined: a key
 * the schema does not have, or `*` where no array is, would be a check that silently never runs.
 * Where the schema cannot tell (a union, a record, a catchall), the key is taken as written.
 */
export function refinementPathProblem(root: z.ZodType, key: string): string | undefined {
  let schema = root;
  const walked: string[] = [];
  const segments = key.split('.');
  for (let i = 0; i < segments.length; i++) {
    let segment = segments[i]!;
    schema = unwrapped(schema, true);
    const d = def(schema);
    const where = walked.length === 0 ? 'the arguments' : walked.join('.');
    if (d.type === 'object') {
      const shape = d.shape ?? {};
      // A field whose name holds a dot (`'user.name'`): the longest run of segments that names one.
      for (let j = segments.length; j > i + 1; j--) {
        const dotted = segments.slice(i, j).join('.');
        if (Object.hasOwn(shape, dotted)) {
          segment = dotted;
          i = j - 1;
          break;
        }
      }
      if (segment === '*' || (!Object.hasOwn(shape, segment) && (d.catchall === undefined || def(d.catchall).type === 'never'))) {
        const fields = Object.keys(shape).join(', ');
        return walked.length === 0 ? `${where} have no field ${segment} (their fields: ${fields})` : `${where} has no field ${segment} (its fields: ${fields})`;
      }
      schema = Object.hasOwn(shape, segment) ? shape[segment]! : d.catchall!;
    } else if (d.type === 'array') {
      if (segment !== '*') return `${where} is an array, whose items are '*' (${[...walked, '*', ...segments.slice(i + 1)].join('.')})`;
      schema = d.element!;
    } else if (['string', 'number', 'int', 'boolean', 'bigint', 'enum', 'literal', 'null', 'date'].includes(d.type)) {
      return `${where} is no object or array`;
    } else {
      return undefined;
    }
    walked.push(segment);
  }
  return undefined;
}
