import { z } from 'zod';

// Which argument a `line` plugin's pieces are the lines of, read from its parameters' JSON Schema.

/**
 * The argument a `line` plugin's pieces are the lines of: `lineField` when it names a string field
 * of the arguments, else their one string field; undefined for any other plugin, or when neither
 * holds.
 */
export function lineFieldOf(definition: { consumes: string; parameters: z.ZodType; lineField?: unknown }): string | undefined {
  if (definition.consumes !== 'line') return undefined;
  const strings = stringFields(definition.parameters);
  if (definition.lineField !== undefined) return typeof definition.lineField === 'string' && strings.includes(definition.lineField) ? definition.lineField : undefined;
  return strings.length === 1 ? strings[0] : undefined;
}

interface PropertySchema {
  type?: unknown;
  anyOf?: PropertySchema[];
}

/** The top-level arguments' JSON Schemas; none when the schema has no JSON Schema (reported elsewhere). */
function propertiesOf(parameters: z.ZodType): Record<string, PropertySchema> {
  try {
    return (z.toJSONSchema(parameters, { io: 'input' }) as { properties?: Record<string, PropertySchema> }).properties ?? {};
  } catch {
    return {};
  }
}

/** The top-level arguments of type string: those a `line` plugin's lines can come from. */
export function stringFields(parameters: z.ZodType): string[] {
  const properties = propertiesOf(parameters);
  return Object.keys(properties).filter((name) => properties[name]?.type === 'string');
}

/** The top-level arguments that are a string or null (`z.string().nullable()`, `.nullish()`). */
export function nullableStringFields(parameters: z.ZodType): string[] {
  const properties = propertiesOf(parameters);
  const types = (p: PropertySchema | undefined): unknown[] => (p?.anyOf ? p.anyOf.flatMap(types) : Array.isArray(p?.type) ? p.type : [p?.type]);
  return Object.keys(properties).filter((name) => {
    const t = types(properties[name]);
    return t.length === 2 && t.includes('string') && t.includes('null');
  });
}
