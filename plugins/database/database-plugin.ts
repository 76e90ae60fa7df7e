import { z } from 'zod';
import { definePlugin, reject } from '../kit/define-plugin.ts';
import { databaseModuleOptions, DEFAULT_MAX_ROWS, DEFAULT_TIME_LIMIT_MS, type DatabasePluginOptions } from './database-options.ts';
import { queryDatabase, type QueryOutcome } from './read-only-query.ts';
import { formatTable } from './result-table.ts';
import { sqlValueJson } from './sql-value.ts';

/**
 * The `database` tool: read-only SQL on one SQLite file. The connection opens when the call
 * starts; the query runs the moment the `query` field is decoded, and a statement that would
 * write rejects the call right there (the decode is cut short).
 *
 * @example
 * const tool = inlineTool(createDatabasePlugin({ file: 'shop.sqlite', maxRows: 50 }));
 */
export function createDatabasePlugin(options: DatabasePluginOptions) {
  return definePlugin({
    name: 'database',
    // Says the row limit: a model that knows it pages with LIMIT/OFFSET, or counts with COUNT(*).
    description: options.description ?? `Runs one read-only SQL query (SQLite) and returns the rows as a table, at most ${options.maxRows ?? DEFAULT_MAX_ROWS} of them. List the tables with: SELECT name, sql FROM sqlite_schema`,
    parameters: z.object({ query: z.string().min(1).describe('One SELECT statement.') }),
    consumes: 'field',
    // better-sqlite3 is synchronous and cannot be interrupted (no sqlite3_interrupt or progress
    // handler; a worker stuck in sqlite3_step ignores terminate()): only killing a process stops
    // a runaway query, so it runs in one, never in the gateway or a worker thread.
    runtime: 'process',
    // The connection is read-only and refuses what would change it (a PRAGMA with a value, ATTACH),
    // so a process can serve one call after another: a call then does not wait for Node to start.
    reuseProcess: true,
    limits: { timeoutMs: (options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS) + 1_000 },
    hooks: {
      onStart: () => void queryDatabase(options, 'SELECT 1'), // opens the file; a failure is reported by the query
      onPiece(piece, ctx) {
        if (piece.kind !== 'field' || piece.path.join('.') !== 'query' || typeof piece.value !== 'string') return;
        const outcome = queryDatabase(options, piece.value);
        if (!outcome.ok && outcome.writes) return reject(outcome.error);
        ctx.state['early'] = { query: piece.value, outcome };
      },
      onEnd({ query }, ctx) {
        const early = ctx.state['early'] as { query: string; outcome: QueryOutcome } | undefined;
        const outcome = early?.query === query ? early.outcome : queryDatabase(options, query);
        if (!outcome.ok) return { ok: false, content: `error: ${outcome.error}` };
        return { ok: true, content: formatTable(outcome), data: { columns: outcome.columns, rows: outcome.rows.map((row) => row.map(sqlValueJson)), truncated: outcome.truncated } };
      },
    },
  });
}

/** Configured by this module's URL query (`?file=…`) or the environment: see databaseModuleOptions. */
export default createDatabasePlugin(databaseModuleOptions(import.meta.url));
