import type { z } from 'zod';
import { GatewayConfigError } from '../core/errors.ts';

/** One setting of a plugin module: its URL's query parameter, else an environment variable. */
export interface ModuleSetting {
  param: string;
  variable: string;
  kind: 'text' | 'integer' | 'flag';
  /** What a valid value is, for the error (e.g. `a whole number from 1 to 100`). */
  rule: string;
}

/**
 * A built-in plugin module's settings, read from its URL's query (runtimes load a plugin by URL,
 * and the process sandbox scrubs the environment), each one the query leaves out from its
 * variable, and checked by the schema `--plugins` is checked by. A value set but not valid is
 * refused, naming where it came from: taken as unset, `CONVEYOR_DATABASE_TIME_LIMIT_MS=2s` ran
 * with the default and said nothing.
 */
export function moduleUrlSettings<T extends z.ZodObject>(
  tool: string,
  moduleUrl: string,
  env: NodeJS.ProcessEnv,
  schema: T,
  settings: { [K in keyof z.infer<T>]?: ModuleSetting },
): Partial<z.infer<T>> {
  const query = new URL(moduleUrl).searchParams;
  const out: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(settings) as Array<[string, ModuleSetting]>) {
    const inQuery = query.get(setting.param);
    const text = inQuery ?? env[setting.variable];
    // Set to nothing reads as unset, as the gateway's own variables do.
    if (text === undefined || text === '') continue;
    const field = schema.shape[key] as z.ZodType;
    const parsed = field.safeParse(valueOf(setting.kind, text));
    if (!parsed.success) {
      const where = inQuery !== null ? `?${setting.param}=` : setting.variable;
      throw new GatewayConfigError(`${tool}: ${where} must be ${setting.rule}, got ${JSON.stringify(text)}`);
    }
    out[key] = parsed.data;
  }
  return out as Partial<z.infer<T>>;
}

function valueOf(kind: ModuleSetting['kind'], text: string): unknown {
  if (kind === 'text') return text;
  const word = text.trim();
  if (kind === 'flag') return word === '1' || word === 'true' ? true : word === '0' || word === 'false' ? false : text;
  return /^-?\d+$/.test(word) ? Number(word) : text;
}
