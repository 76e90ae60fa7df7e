import { z } from 'zod';
import { parseParserOptions } from './parser-options.ts';

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
export const parseFormatOptions = parseParserOptions;

/**
 * What a CallRegistry derives from its options, made once per options object (parsers are
 * created per generation, mostly with the same options) and only read after that.
 */
class CallPolicy {
  readonly tools: Set<string> | undefined;
  /** Every argument name some tool streams as lines. */
  readonly lineFieldNames: readonly string[];
  readonly #lineFields: Record<string, string>;
  readonly #lineFieldByName = new Map<string, string | undefined>();
  readonly #linePathsByKeys = new Map<readonly string[], ReadonlyArray<[string, string]>>();

  constructor(options: CallOptions) {
    this.tools = options.tools ? new Set(options.tools) : undefined;
    const names: string[] = [];
    for (const name of Object.values(options.lineFields)) if (!names.includes(name)) names.push(name);
    this.lineFieldNames = names;
    this.#lineFields = options.lineFields;
  }

  lineField(name: string): string | undefined {
    const known = this.#lineFieldByName.get(name);
    if (known !== undefined || this.#lineFieldByName.has(name)) return known;
    const field = Object.hasOwn(this.#lineFields, name) ? this.#lineFields[name] : this.#lineFields['*'];
    // Names come from model output: remember a bounded number, not every name ever seen.
    if (this.#lineFieldByName.size < MAX_REMEMBERED_NAMES) this.#lineFieldByName.set(name, field);
    return field;
  }

  linePaths(argsKeys: readonly string[]): ReadonlyArray<[string, string]> {
    let paths = this.#linePathsByKeys.get(argsKeys);
    if (paths === undefined) {
      const made: Array<[string, string]> = [];
      for (const key of argsKeys) for (const field of this.lineFieldNames) made.push([key, field]);
      paths = made;
      this.#linePathsByKeys.set(argsKeys, paths);
    }
    return paths;
  }
}

const policies = new WeakMap<CallOptions, CallPolicy>();
const MAX_REMEMBERED_NAMES = 256;

/** Allocates call ids and applies the options that decide how a call by a given name is treated. */
export class CallRegistry {
  readonly #options: CallOptions;
  readonly #policy: CallPolicy;
  #calls = 0;
  #scanKey: string | undefined;

  constructor(options: CallOptions) {
    this.#options = options;
    let policy = policies.get(options);
    if (policy === undefined) {
      policy = new CallPolicy(options);
      policies.set(options, policy);
    }
    this.#policy = policy;
  }

  get maxFieldDepth(): number {
    return this.#options.maxFieldDepth ?? Number.POSITIVE_INFINITY;
  }

  /**
   * What decides how a call object's JSON is scanned (its line fields and field depth), as a
   * string: the same for every parser given equal options, though the gateway makes new options
   * (a new call id prefix) for every round.
   */
  get scanKey(): string {
    return (this.#scanKey ??= JSON.stringify([this.#options.maxFieldDepth ?? null, this.lineFieldNames]));
  }

  /** Every argument name some tool streams as lines (the scanner must watch all of them). */
  get lineFieldNames(): readonly string[] {
    return this.#policy.lineFieldNames;
  }

  /**
   * `[key, field]` for each of `argsKeys` and each line field name: the paths of a call object
   * (`{"name": …, "arguments": {…}}`) whose strings stream as lines. The same array for every
   * call with these keys (the scanner only reads it).
   */
  linePaths(argsKeys: readonly string[]): ReadonlyArray<[string, string]> {
    return this.#policy.linePaths(argsKeys);
  }

  /** Why a call to `name` is refused, if it is. */
  rejection(name: string): string | undefined {
    if (name.length === 0) return 'empty tool name';
    const tools = this.#policy.tools;
    if (tools && !tools.has(name)) return `unknown tool "${name}"`;
    return undefined;
  }

  lineField(name: string): string | undefined {
    return this.#policy.lineField(name);
  }

  nextCallId(): string {
    this.#calls += 1;
    return `${this.#options.callIdPrefix}${this.#calls}`;
  }
}
