import { z } from 'zod';
import { InvalidRequestError } from '../../core/errors.ts';

/** Validates a parser's options at the edge (they often come from config files or requests). */
export function parseParserOptions<S extends z.ZodType>(schema: S, options: unknown, format: string): z.output<S> {
  const parsed = schema.safeParse(options ?? {});
  if (!parsed.success) {
    const param = parsed.error.issues[0]?.path.join('.') || null;
    throw new InvalidRequestError(`invalid ${format} parser options: ${z.prettifyError(parsed.error)}`, param);
  }
  return parsed.data;
}
