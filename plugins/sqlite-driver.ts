import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type SqliteDatabase = BetterSqlite3.Database;
export type SqliteStatement<BindParameters extends unknown[] = unknown[], Row = unknown> = BetterSqlite3.Statement<BindParameters, Row>;
export type SqliteOptions = BetterSqlite3.Options;

const require = createRequire(import.meta.url);

/**
 * Which better-sqlite3 this Node loads. 12 (a V8 `ObjectWrap` addon) aborts the whole process on
 * Node 24 when a statement is collected at a worker thread's exit, or in some collections on the
 * main thread ("Assertion failed: (env) != nullptr" in `RemoveEnvironmentCleanupHook`;
 * WiseLibs/better-sqlite3#1515, closed without a fix): the search tool runs in worker threads.
 * 13 is a Node-API rewrite that needs Node-API 10 (Node >= 22.14), which Node 20 never got: it
 * crashes there in `new Database()`. Both are installed (13 as the alias
 * `better-sqlite3-node-api`); their API is the same for everything used here.
 */
export const SQLITE_DRIVER = Number(process.versions.napi) >= 10 ? 'better-sqlite3-node-api' : 'better-sqlite3';

const Driver = require(SQLITE_DRIVER) as typeof BetterSqlite3;

/** Opens (or creates) a SQLite database file with the driver that works on this Node. */
export function openSqlite(file: string, options?: SqliteOptions): SqliteDatabase {
  return new Driver(file, options);
}
