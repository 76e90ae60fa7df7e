import { databaseSettingsSchema, MAX_TOOL_TIME_MS } from '../builtin-plugins-config.ts';
import { moduleUrlSettings } from '../module-url-settings.ts';
import type { QueryLimits } from './read-only-query.ts';

export interface DatabasePluginOptions extends Partial<QueryLimits> {
  /** The SQLite file; opened read-only, never created. */
  file: string;
  /** Replaces the default tool description (e.g. to list the tables for the model). */
  description?: string;
}

export const DEFAULT_MAX_ROWS = 100;
export const DEFAULT_TIME_LIMIT_MS = 2_000;
/**
 * The cells' characters a table keeps: under the gateway's 20,000-character cap on an observation
 * (gateway/observation-cap.ts) with room for the table's separators and its row note, so a big
 * result is cut here, at a whole row that says more were left out, and not by the gateway in the
 * middle of one (at 64 Ki it always was).
 */
export const DEFAULT_MAX_CHARS = 12_000;

/**
 * The options of the default `database` module. Runtimes load a plugin by its module URL (and
 * the process sandbox scrubs the environment), so the URL's query configures it, e.g.
 * `database-plugin.ts?file=%2Fdata%2Fshop.sqlite&maxRows=50&timeLimitMs=1000`; the variables
 * `CONVEYOR_DATABASE_FILE`, `_MAX_ROWS`, `_TIME_LIMIT_MS`, `_MAX_CHARS` fill what the query leaves
 * out. A value that is set but not valid throws a GatewayConfigError that names it.
 */
export function databaseModuleOptions(moduleUrl: string, env: NodeJS.ProcessEnv = process.env): DatabasePluginOptions {
  const whole = 'a whole number, at least 1';
  const settings = moduleUrlSettings('database', moduleUrl, env, databaseSettingsSchema, {
    file: { param: 'file', variable: 'CONVEYOR_DATABASE_FILE', kind: 'text', rule: 'a file path' },
    maxRows: { param: 'maxRows', variable: 'CONVEYOR_DATABASE_MAX_ROWS', kind: 'integer', rule: whole },
    timeLimitMs: { param: 'timeLimitMs', variable: 'CONVEYOR_DATABASE_TIME_LIMIT_MS', kind: 'integer', rule: `a whole number of milliseconds from 1 to ${MAX_TOOL_TIME_MS}` },
    maxChars: { param: 'maxChars', variable: 'CONVEYOR_DATABASE_MAX_CHARS', kind: 'integer', rule: whole },
  });
  return { ...settings, file: settings.file ?? '' };
}
