import { z } from 'zod';
import { MAX_TIMER_MS } from '../core/max-timer-ms.ts';

const positiveInt = z.number().int().positive();
/** The longest time limit of a tool whose own limit (limits.timeoutMs) is this one plus a second: it must fit Node's timers. */
export const MAX_TOOL_TIME_MS = MAX_TIMER_MS - 1_000;
const toolTimeMs = positiveInt.max(MAX_TOOL_TIME_MS, `must be at most ${MAX_TOOL_TIME_MS} ms: the tool's limit is 1 s more, and Node's timers keep at most ${MAX_TIMER_MS} ms (past it they fire at once)`);

/** The database tool's settings, from --plugins or its module URL's query (database-options.ts). */
export const databaseSettingsSchema = z.strictObject({
  /** SQLite file, opened read-only (default: a small demo `employees` database). */
  file: z.string().optional(),
  maxRows: positiveInt.optional(),
  timeLimitMs: toolTimeMs.optional(),
  /** Characters of table returned at most (cells, separators and header, all rows together; default 12 000). */
  maxChars: positiveInt.optional(),
});

/** The http_get tool's settings, from --plugins or its module URL's query (http-get-options.ts). */
export const httpGetSettingsSchema = z.strictObject({
  /** Let the tool reach loopback and private addresses (off: SSRF protection). */
  allowPrivateNetwork: z.boolean().optional(),
  maxBytes: positiveInt.optional(),
  timeoutMs: toolTimeMs.optional(),
  /** Redirects followed at most (default 5); with 0 a redirect is reported as an error. */
  maxRedirects: z.number().int().nonnegative().optional(),
});

/**
 * Which built-in tools the gateway registers, and their settings. Each is on by default; `false`
 * turns one off. Validated once at start-up (`conveyor serve --plugins '{"http_get":false}'`).
 */
export const builtinPluginsConfigSchema = z
  .strictObject({
    python: z.boolean().default(true),
    search: z
      .union([
        z.literal(false),
        z.strictObject({
          /** SQLite FTS5 index file (default: the built python-docs index, else the sample pages). */
          index: z.string().optional(),
          /** A search API URL template with `{query}` (and `{limit}`): the HTTP backend instead of SQLite. */
          url: z.url().optional(),
          maxResults: positiveInt.max(50).optional(),
        }),
      ])
      .default({}),
    calculator: z.boolean().default(true),
    database: z.union([z.literal(false), databaseSettingsSchema]).default({}),
    /** The example validating tool: `location` must be "City, ST" (plugins/validate). */
    local_news: z.boolean().default(true),
    /** Fills a template with values: a plan's last, answer-writing step. */
    format: z.boolean().default(true),
    /** LLMCompiler plans (plugins/plan); the defaults are DEFAULT_MAX_PLAN_STEPS and DEFAULT_MAX_PARALLEL_STEPS. */
    plan: z
      .union([
        z.literal(false),
        z.strictObject({
          /** Steps one plan may have (`join` aside): one model answer cannot order more tool calls. */
          maxSteps: positiveInt.optional(),
          /** Steps of one plan running at once, so that one plan cannot take every worker of a tool runtime. */
          maxParallelSteps: positiveInt.optional(),
        }),
      ])
      .default({}),
    http_get: z.union([z.literal(false), httpGetSettingsSchema]).default({}),
  })
  .strict();

export type BuiltinPluginsConfig = z.output<typeof builtinPluginsConfigSchema>;
export type BuiltinPluginsConfigInput = z.input<typeof builtinPluginsConfigSchema>;
