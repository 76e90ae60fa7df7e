import { z } from 'zod';
import { InvalidRequestError } from '../../core/errors.ts';

/** Options every tool-call format shares (each format's schema extends this one). */
export const CallOptionsSchema = z
  .object({
    /** Call ids are this prefix plus a per-parser counter (1, 2, …), so they are deterministic. */
    callIdPrefix: z.string().default('call_'),
    /** When given, a call to any other tool is reported as `malformed` and its text released. */
    tools: z.array(z.string().min(1)).optional(),
    /**
     * Tool name → top-level string argument whose completed lines are also emitted as `line`
     * pieces while it streams ("*" matches any tool). For tools called with raw code instead of
     * JSON (`codeTools`), this names the argument the code is given as (default "code").
     */
    lineFields: z.record(z.string().min(1), z.string().min(1)).default({ python: 'code' }),
    /** `field` pieces are emitted for values at depth 1..maxFieldDepth inside the arguments. */
    maxFieldDepth: z.number().int().min(1).optional(),
  })
  .strict();

export type CallOptions = z.output<typeof CallOptionsSchema>;

/** Validates `options` against a format's schema, as an InvalidRequestError naming the field. */
export function parseFormatOptions<S extends z.ZodType>(schema: S, options: unknown, format: string): z.output<S> {
  const parsed = schema.safeParse(options ?? {});
  if (!parsed.success) {
    const param = parsed.error.issues[0]?.path.join('.') || null;
    throw new InvalidRequestError(`invalid ${format} parser options: ${z.prettifyError(parsed.error)}`, param);
  }
  return parsed.data;
}

/** Allocates call ids and applies the options that decide how a call by a given name is treated. */
export class CallRegistry {
  readonly #options: CallOptions;
  readonly #tools: Set<string> | undefined;
  readonly #lineFieldNames: readonly string[];
  #calls = 0;

  constructor(options: CallOptions) {
    this.#options = options;
    this.#tools = options.tools ? new Set(options.tools) : undefined;
    this.#lineFieldNames = [...new Set(Object.values(options.lineFields))];
  }

  get maxFieldDepth(): number {
    return this.#options.maxFieldDepth ?? Number.POSITIVE_INFINITY;
  }

  /** Every argument name some tool streams as lines (the scanner must watch all of them). */
  get lineFieldNames(): readonly string[] {
    return this.#lineFieldNames;
  }

  /** Why a call to `name` is refused, if it is. */
  rejection(name: string): string | undefined {
    if (name.length === 0) return 'empty tool name';
    if (this.#tools && !this.#tools.has(name)) return `unknown tool "${name}"`;
    return undefined;
  }

  lineField(name: string): string | undefined {
    return Object.hasOwn(this.#options.lineFields, name) ? this.#options.lineFields[name] : this.#options.lineFields['*'];
  }

  nextCallId(): string {
    this.#calls += 1;
    return `${this.#options.callIdPrefix}${this.#calls}`;
  }
}
