import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { openSqlite, type SqliteDatabase, type SqliteStatement } from '../sqlite-driver.ts';
import { textHead } from '../search/text-head.ts';
import { DEFAULT_MAX_CHARS, DEFAULT_MAX_ROWS, DEFAULT_TIME_LIMIT_MS, type DatabasePluginOptions } from './database-options.ts';
import { tableCell } from './result-table.ts';
import type { SqlValue } from './sql-value.ts';

export interface QueryLimits {
  /** Rows returned at most; the rest is reported as truncated. */
  maxRows: number;
  /**
   * Checked between rows: stops a query that streams many rows; a single long step needs the
   * process runtime's kill. Also bounds the wait for a lock another program's write holds.
   */
  timeLimitMs: number;
  /**
   * Characters of the table returned at most, the header and the ` | ` separators included (a
   * result of many narrow columns is mostly separators): rows past it are left out (as past
   * maxRows), a first row longer than that alone has its long text cells cut, and a header past
   * half of it has its long names cut.
   */
  maxChars: number;
}

/**
 * Pragmas whose argument names what to read (a table, an index), never a setting: the schema
 * questions a model asks (`PRAGMA table_info(products)`) keep working.
 */
const READING_PRAGMAS = new Set([
  'table_info', 'table_xinfo', 'table_list', 'index_list', 'index_info', 'index_xinfo',
  'foreign_key_list', 'foreign_key_check', 'integrity_check', 'quick_check',
]);

/**
 * `PRAGMA name = value` or `PRAGMA name(value)` (also behind comments, `;` or EXPLAIN), other than
 * the READING_PRAGMAS: SQLite applies a flag pragma (query_only, writable_schema,
 * reverse_unordered_selects, …) while it *compiles* the statement, so such a statement changes the
 * connection even though it is then refused, or never run at all (`EXPLAIN PRAGMA query_only = 0`).
 * It is refused unprepared.
 */
export function isPragmaWithValue(sql: string): boolean {
  let rest = sql;
  for (;;) {
    rest = rest.replace(/^(?:\s|;|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$))*/, '');
    const word = /^[A-Za-z_]+/.exec(rest)?.[0];
    if (word === undefined) return false;
    rest = rest.slice(word.length);
    const keyword = word.toUpperCase();
    if (keyword === 'PRAGMA') {
      const pragma = /^\s*(?:[\w"`[\]]+\s*\.\s*)?["`[]?(\w+)["`\]]?\s*([=(])?/.exec(rest);
      if (!pragma?.[2]) return /[=(]/.test(rest);
      return pragma[2] === '=' || !READING_PRAGMAS.has(pragma[1]!.toLowerCase());
    }
    if (keyword !== 'EXPLAIN' && keyword !== 'QUERY' && keyword !== 'PLAN') return false;
  }
}

/**
 * `PRAGMA database_list` and its table-valued `pragma_database_list` show the database file's
 * path on the host, which is not the model's to see. A pragma or table name cannot be built at
 * run time in SQL and `database_list` is not split by quoting or case, so the text itself is
 * checked (a string literal that holds it is refused too: a false alarm, never a leak).
 */
export function readsFilePaths(sql: string): boolean {
  return /database_list/i.test(sql);
}

export const FILE_PATHS_ERROR = "PRAGMA database_list is not available (it shows the database file's path on the host); the database's schema name is main";

export const PRAGMA_WITH_VALUE_ERROR =
  "a PRAGMA that sets a value is not allowed (it would change the connection); read a setting with PRAGMA name alone or its table-valued function, e.g. SELECT * FROM pragma_table_info('products')";

export const PLACEHOLDER_ERROR =
  'the query has a parameter placeholder (?, ?1, :name, @name or $name), and this tool binds no values: write each value into the query as a literal';

export type QueryOutcome =
  | { ok: true; columns: string[]; rows: SqlValue[][]; truncated: boolean }
  /** `writes`: the statement would change the database (or its connection), not merely failed. */
  | { ok: false; error: string; writes: boolean };

/** Each file's connection, and the file it opened (its inode): a file replaced since is opened again. */
const handles = new Map<string, { db: SqliteDatabase; inode: string }>();

/**
 * This process's (or worker's) read-only connection to `file`, opened on first use: SQLite
 * itself refuses writes (readonly, query_only), a missing file is an error rather than a new
 * empty database, and no JS function is registered on it, so a query cannot call back into JS.
 * A file replaced by another (a deploy's atomic rename) is opened anew: a kept process
 * (reuseProcess) would otherwise go on answering from the old one. Changes written into the same
 * file SQLite sees itself.
 */
export function openReadOnlyDatabase(file: string): SqliteDatabase {
  const inode = inodeOf(file);
  let handle = handles.get(file);
  if (handle !== undefined && (!handle.db.open || handle.inode !== inode)) {
    if (handle.db.open) handle.db.close();
    handle = undefined;
  }
  if (handle === undefined) {
    const db = openSqlite(file, { readonly: true, fileMustExist: true });
    // A sort or DISTINCT past the page cache spills to a temporary file, which the sandbox keeps
    // under 16 MiB (RLIMIT_FSIZE, sandbox/runtimes/process-launch.ts): past it the query failed
    // with "disk I/O error". In memory it is bounded by the process's data limit instead.
    db.pragma('temp_store = MEMORY');
    db.pragma('query_only = ON');
    db.defaultSafeIntegers(true);
    handle = { db, inode };
    handles.set(file, handle);
  }
  return handle.db;
}

/** Closes every connection opened by openReadOnlyDatabase (tests, shutdown). */
export function closeReadOnlyDatabases(): void {
  for (const { db } of handles.values()) db.close();
  handles.clear();
}

function inodeOf(file: string): string {
  try {
    const { dev, ino } = statSync(file);
    return `${dev}:${ino}`;
  } catch {
    return 'missing'; // opening it says so
  }
}

/**
 * Runs one read-only statement and collects at most `maxRows` rows. Anything that is not a
 * single statement returning rows without writing (better-sqlite3's `stmt.reader` and
 * `stmt.readonly`, i.e. SQLite's own verdict) is refused before it runs: INSERT … RETURNING,
 * ATTACH and PRAGMA assignments included.
 */
export function runReadOnlyQuery(db: SqliteDatabase, sql: string, limits: QueryLimits): QueryOutcome {
  if (isPragmaWithValue(sql)) return { ok: false, error: PRAGMA_WITH_VALUE_ERROR, writes: true };
  if (readsFilePaths(sql)) return { ok: false, error: FILE_PATHS_ERROR, writes: false };
  const deadline = performance.now() + limits.timeLimitMs;
  waitForLocksUntil(db, deadline);
  let stmt: SqliteStatement;
  try {
    stmt = db.prepare(sql);
  } catch (err) {
    return { ok: false, error: sqliteErrorText(err, db, limits), writes: false };
  }
  if (!stmt.readonly || !stmt.reader) {
    return { ok: false, error: 'only read-only queries that return rows (SELECT, WITH … SELECT, EXPLAIN) are allowed', writes: true };
  }
  waitForLocksUntil(db, deadline);
  const columns = headerNames(stmt.columns().map((c) => c.name), limits.maxChars);
  const rows: SqlValue[][] = [];
  let truncated = false;
  let chars = lineLength(columns);
  try {
    for (const row of stmt.raw(true).iterate() as IterableIterator<SqlValue[]>) {
      if (rows.length === limits.maxRows) {
        truncated = true;
        break;
      }
      let values = row;
      const length = lineLength(values);
      if (chars + length > limits.maxChars) {
        if (rows.length > 0) {
          truncated = true;
          break;
        }
        values = values.map((v) => cutText(v, Math.max(1, Math.floor(limits.maxChars / values.length))));
      }
      chars += length;
      rows.push(values);
      if (performance.now() > deadline) return { ok: false, error: `the query ran longer than ${limits.timeLimitMs} ms`, writes: false };
    }
  } catch (err) {
    return { ok: false, error: sqliteErrorText(err, db, limits), writes: false };
  }
  return { ok: true, columns, rows, truncated };
}

/**
 * SQLite waits for a writer's lock up to the connection's busy timeout, 5 s in better-sqlite3:
 * past the time limit, and past the tool's own (1 s more), so a locked file ended in the process
 * being killed ("timed out") instead of an answer. The wait is bounded by what is left of the limit.
 */
function waitForLocksUntil(db: SqliteDatabase, deadline: number): void {
  db.pragma(`busy_timeout = ${Math.max(0, Math.ceil(deadline - performance.now()))}`);
}

function sqliteErrorText(err: unknown, db: SqliteDatabase, limits: QueryLimits): string {
  // better-sqlite3's words ("Too few parameter values were provided") are about values the call
  // could pass, and the tool's only argument is the query.
  if (!(err as { code?: unknown }).code && /^(Too few parameter values|Missing named parameters)/.test((err as Error).message)) return PLACEHOLDER_ERROR;
  const code = (err as { code?: unknown }).code;
  if (code === 'SQLITE_BUSY') {
    return `the database is locked: another program was writing to it for the whole ${limits.timeLimitMs} ms time limit; try the query again later`;
  }
  // SQLite reads the header at the first statement: a WAL file then needs its -shm beside it, which
  // a read-only connection may not create in the folder the sandbox grants read-only (nor in a
  // folder this uid cannot write). The bare "unable to open database file" said nothing of that.
  if (code === 'SQLITE_CANTOPEN' && isWalFile(db.name)) {
    return 'cannot open the database: the file is in WAL mode and its folder is read-only to this tool, so SQLite cannot create (or open) the -shm file it needs beside it (the operator can switch it: PRAGMA journal_mode=DELETE)';
  }
  return (err as Error).message;
}

/** Whether a SQLite file's header says WAL mode (its read and write versions, bytes 18 and 19, are 2). */
function isWalFile(file: string): boolean {
  const header = Buffer.alloc(20);
  try {
    const fd = openSync(file, 'r');
    try {
      readSync(fd, header, 0, 20, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
  return header[18] === 2 && header[19] === 2;
}

/** Opens (or reuses) the configured file and runs `sql`; every failure is an outcome, never a throw. */
export function queryDatabase(options: DatabasePluginOptions, sql: string): QueryOutcome {
  if (!options.file) return { ok: false, error: 'no database is configured (the module URL\'s ?file= or CONVEYOR_DATABASE_FILE)', writes: false };
  let db: SqliteDatabase;
  try {
    db = openReadOnlyDatabase(options.file);
  } catch (err) {
    return { ok: false, error: `cannot open the database: ${(err as Error).message}`, writes: false };
  }
  return runReadOnlyQuery(db, sql, {
    maxRows: options.maxRows ?? DEFAULT_MAX_ROWS,
    timeLimitMs: options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS,
    maxChars: options.maxChars ?? DEFAULT_MAX_CHARS,
  });
}

/** A row's characters as formatTable writes it: its cells, the ` | ` between them and its line break. */
const lineLength = (values: readonly SqlValue[]) => values.reduce<number>((sum, v) => sum + tableCell(v).length + 3, -2);

/**
 * The column names, each cut (as a long cell is) when the header would take more than half of
 * maxChars: a name is the model's alias or, without one, the expression's text, and a header past
 * the budget went out whole, past the gateway's cap, which cut it before any row or the row count.
 */
function headerNames(names: string[], maxChars: number): string[] {
  if (lineLength(names) <= maxChars / 2) return names;
  const max = Math.max(1, Math.floor(maxChars / 2 / names.length));
  return names.map((name) => cutText(name, max) as string);
}

/** A text cell cut to `max` characters, saying how long it was. */
function cutText(value: SqlValue, max: number): SqlValue {
  // textHead: never between a surrogate pair's halves, whose lone half no UTF-8 encoder takes.
  return typeof value === 'string' && value.length > max ? `${textHead(value, max)}… [cut: ${value.length} characters]` : value;
}
