import { openSqlite, type SqliteDatabase, type SqliteStatement } from '../sqlite-driver.ts';
import { DEFAULT_MAX_ROWS, DEFAULT_TIME_LIMIT_MS, type DatabasePluginOptions } from './database-options.ts';

export interface QueryLimits {
  /** Rows returned at most; the rest is reported as truncated. */
  maxRows: number;
  /** Checked between rows: stops a query that streams many rows; a single long step needs the thread runtime's kill. */
  timeLimitMs: number;
}

export type QueryOutcome =
  | { ok: true; columns: string[]; rows: unknown[][]; truncated: boolean }
  /** `writes`: the statement would change the database (or its connection), not merely failed. */
  | { ok: false; error: string; writes: boolean };

const handles = new Map<string, SqliteDatabase>();

/**
 * This process's (or worker's) read-only connection to `file`, opened on first use: SQLite
 * itself refuses writes (readonly, query_only), a missing file is an error rather than a new
 * empty database, and no JS function is registered on it, so a query cannot call back into JS.
 */
export function openReadOnlyDatabase(file: string): SqliteDatabase {
  let db = handles.get(file);
  if (db === undefined || !db.open) {
    db = openSqlite(file, { readonly: true, fileMustExist: true });
    db.pragma('query_only = ON');
    db.defaultSafeIntegers(true);
    handles.set(file, db);
  }
  return db;
}

/** Closes every connection opened by openReadOnlyDatabase (tests, shutdown). */
export function closeReadOnlyDatabases(): void {
  for (const db of handles.values()) db.close();
  handles.clear();
}

/**
 * Runs one read-only statement and collects at most `maxRows` rows. Anything that is not a
 * single statement returning rows without writing (better-sqlite3's `stmt.reader` and
 * `stmt.readonly`, i.e. SQLite's own verdict) is refused before it runs: INSERT … RETURNING,
 * ATTACH and PRAGMA assignments included.
 */
export function runReadOnlyQuery(db: SqliteDatabase, sql: string, limits: QueryLimits): QueryOutcome {
  let stmt: SqliteStatement;
  try {
    stmt = db.prepare(sql);
  } catch (err) {
    return { ok: false, error: (err as Error).message, writes: false };
  }
  if (!stmt.readonly || !stmt.reader) {
    return { ok: false, error: 'only read-only queries that return rows (SELECT, WITH … SELECT, EXPLAIN) are allowed', writes: true };
  }
  const deadline = performance.now() + limits.timeLimitMs;
  const columns = stmt.columns().map((c) => c.name);
  const rows: unknown[][] = [];
  let truncated = false;
  try {
    for (const row of stmt.raw(true).iterate() as IterableIterator<unknown[]>) {
      if (rows.length === limits.maxRows) {
        truncated = true;
        break;
      }
      rows.push(row.map(plainValue));
      if (performance.now() > deadline) return { ok: false, error: `the query ran longer than ${limits.timeLimitMs} ms`, writes: false };
    }
  } catch (err) {
    return { ok: false, error: (err as Error).message, writes: false };
  }
  return { ok: true, columns, rows, truncated };
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
  return runReadOnlyQuery(db, sql, { maxRows: options.maxRows ?? DEFAULT_MAX_ROWS, timeLimitMs: options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS });
}

/** Exact integers stay exact (as strings past 2^53); blobs are described, not dumped. */
function plainValue(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Uint8Array) return `<blob ${value.length} bytes>`;
  return value;
}

/**
 * The rows as a compact pipe-separated table the model reads easily, plus a row count line.
 *
 * @example
 * formatTable({ ok: true, columns: ['n'], rows: [[1]], truncated: false }) // 'n\n1\n(1 row)'
 */
export function formatTable(result: Extract<QueryOutcome, { ok: true }>): string {
  const cell = (v: unknown) => (v === null ? 'NULL' : typeof v === 'string' && !/[|\n\r]/.test(v) ? v : typeof v === 'string' ? JSON.stringify(v) : String(v));
  const lines = [result.columns.join(' | '), ...result.rows.map((row) => row.map(cell).join(' | '))];
  const count = result.truncated ? `(first ${result.rows.length} rows; more were left out)` : `(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`;
  return `${lines.join('\n')}\n${count}`;
}
