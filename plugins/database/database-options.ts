import type { QueryLimits } from './read-only-query.ts';

export interface DatabasePluginOptions extends Partial<QueryLimits> {
  /** The SQLite file; opened read-only, never created. */
  file: string;
  /** Replaces the default tool description (e.g. to list the tables for the model). */
  description?: string;
}

export const DEFAULT_MAX_ROWS = 100;
export const DEFAULT_TIME_LIMIT_MS = 2_000;
/** 64 Ki characters: the table a model reads, and well under the process runtime's 8 MiB message. */
export const DEFAULT_MAX_CHARS = 64 * 1024;

/**
 * The options of the default `database` module. Runtimes load a plugin by its module URL (and
 * the process sandbox scrubs the environment), so the URL's query configures it, e.g.
 * `database-plugin.ts?file=%2Fdata%2Fshop.sqlite&maxRows=50&timeLimitMs=1000`; the variables
 * `CONVEYOR_DATABASE_FILE`, `_MAX_ROWS`, `_TIME_LIMIT_MS`, `_MAX_CHARS` fill what the query leaves out.
 */
export function databaseModuleOptions(moduleUrl: string, env: NodeJS.ProcessEnv = process.env): DatabasePluginOptions {
  const query = new URL(moduleUrl).searchParams;
  const positive = (param: string, variable: string) => {
    const text = query.get(param) ?? env[variable];
    const value = Number(text);
    return text && Number.isInteger(value) && value > 0 ? value : undefined;
  };
  return {
    file: query.get('file') ?? env['CONVEYOR_DATABASE_FILE'] ?? '',
    maxRows: positive('maxRows', 'CONVEYOR_DATABASE_MAX_ROWS'),
    timeLimitMs: positive('timeLimitMs', 'CONVEYOR_DATABASE_TIME_LIMIT_MS'),
    maxChars: positive('maxChars', 'CONVEYOR_DATABASE_MAX_CHARS'),
  };
}
