import { z } from 'zod';
import { InvalidRequestError } from '../../core/errors.ts';

/** Each schema's output for "no options", parsed once: a gateway creates a parser per generation. */
const defaultsBySchema = new WeakMap<z.ZodType, unknown>();

/**
 * Validates a parser's options at the edge (they often come from config files or requests).
 * Without options (undefined or `{}`) the schema's defaults are parsed once and shared, frozen,
 * by every parser of that schema: parsing them again per generation was a measurable share of a
 * short output's parse (bench/parsers).
 */
export function parseParserOptions<S extends z.ZodType>(schema: S, options: unknown, format: string): z.output<S> {
  return validateParserOptions(schema, options ?? {}, format);
}

/** parseParserOptions without reading null as "no options" (the code-fence parser refuses it). */
export function validateParserOptions<S extends z.ZodType>(schema: S, options: unknown, format: string): z.output<S> {
  const none = isEmptyObject(options);
  if (none) {
    const defaults = defaultsBySchema.get(schema);
    if (defaults !== undefined) return defaults as z.output<S>;
  }
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    const param = parsed.error.issues[0]?.path.join('.') || null;
    throw new InvalidRequestError(`invalid ${format} parser options: ${z.prettifyError(parsed.error)}`, param);
  }
  if (none) defaultsBySchema.set(schema, deepFreeze(parsed.data));
  return parsed.data;
}

/** `{}` as an object literal writes it: no own or inherited enumerable keys, a plain prototype. */
function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const _ in value) return false;
  return true;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
