import { existsSync, renameSync } from 'node:fs';
import path from 'node:path';
import { openSqlite } from '../../plugins/sqlite-driver.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseModuleOptions } from '../../plugins/database/database-options.ts';
import databaseDefault, { createDatabasePlugin } from '../../plugins/database/database-plugin.ts';
import { closeReadOnlyDatabases } from '../../plugins/database/read-only-query.ts';
import type { DatabasePluginOptions } from '../../plugins/database/database-options.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { suiteTempDir } from '../support/temp-dir.ts';
import { DEFAULT_MAX_OBSERVATION_CHARS } from '../../gateway/observation-cap.ts';

const dir = suiteTempDir('conveyor-database-');
const file = path.join(dir, 'shop.sqlite');

beforeAll(() => {
  const db = openSqlite(file);
  db.exec(`
    CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, note TEXT, image BLOB);
    INSERT INTO products VALUES (1, 'kettle', 24.5, NULL, x'010203'), (2, 'mug', 6, 'blue | white', NULL), (3, 'teapot', 31, 'two
lines', NULL);
  `);
  db.close();
});

afterAll(closeReadOnlyDatabases);

const query = (sql: string, options: Partial<DatabasePluginOptions> = {}, streamed = true) =>
  runScriptedCall(inlineTool(createDatabasePlugin({ file, ...options })), {
    pieces: streamed ? [{ kind: 'field', path: ['query'], value: sql }] : [],
    args: { query: sql },
  });

const count = () => {
  const db = openSqlite(file, { readonly: true });
  const n = (db.prepare('SELECT count(*) AS n FROM products').get() as { n: number }).n;
  db.close();
  return n;
};

describe('database plugin', () => {
  it('declares a field-consuming process tool (only a process kill stops a runaway query) with a time limit above the query limit', () => {
    const definition = createDatabasePlugin({ file, timeLimitMs: 500 });
    expect(definition).toMatchObject({ name: 'database', consumes: 'field', runtime: 'process', limits: { timeoutMs: 1500 } });
    expect(databaseDefault.name).toBe('database');
  });

  it('returns the rows as a compact table, values exact', async () => {
    const run = await query('SELECT id, name, price, note, image FROM products ORDER BY id');
    expect(run.verdicts).toEqual([undefined]);
    expect(run.result).toMatchObject({ ok: true });
    expect(run.result?.content).toBe(
      ['id | name | price | note | image', "1 | kettle | 24.5 | NULL | X'010203'", '2 | mug | 6.0 | "blue | white" | NULL', '3 | teapot | 31.0 | "two\\nlines" | NULL', '(3 rows)'].join('\n'),
    );
    expect(run.result?.data).toMatchObject({ columns: ['id', 'name', 'price', 'note', 'image'], truncated: false });
    expect((await query('SELECT 9007199254740993 AS big, 2 AS small')).result?.content).toBe('big | small\n9007199254740993 | 2\n(1 row)');
  });

  it('gives the same result whether or not the field was streamed', async () => {
    const sql = 'SELECT name FROM products WHERE price > 10 ORDER BY name';
    expect((await query(sql, {}, false)).result).toEqual((await query(sql)).result);
  });

  it('stops at the row limit and says so', async () => {
    const run = await query('WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n', { maxRows: 3 });
    expect(run.result).toMatchObject({ ok: true, content: 'x\n1\n2\n3\n(first 3 rows; more were left out)', data: { truncated: true } });
  });

  it('stops a query that keeps producing rows past the time limit', async () => {
    const run = await query('WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n', { maxRows: 1e12, timeLimitMs: 1 });
    expect(run.result).toMatchObject({ ok: false, content: 'error: the query ran longer than 1 ms' });
  });

  it('rejects any statement that would write at the query field, before anything runs', async () => {
    for (const sql of [
      "INSERT INTO products(name) VALUES ('x')",
      "INSERT INTO products(name) VALUES ('x') RETURNING id",
      'DELETE FROM products',
      'DROP TABLE products',
      'CREATE TABLE t(x)',
      `ATTACH DATABASE '${path.join(dir, 'other.sqlite')}' AS other`,
    ]) {
      const run = await query(sql);
      expect(run.rejected, sql).toBe('only read-only queries that return rows (SELECT, WITH … SELECT, EXPLAIN) are allowed');
      expect(run.result, sql).toBeUndefined();
    }
    expect(count()).toBe(3);
    expect(existsSync(path.join(dir, 'other.sqlite'))).toBe(false);
    // Delivered whole (no pieces): the same refusal, as a tool error.
    expect((await query('DELETE FROM products', {}, false)).result).toMatchObject({ ok: false, content: expect.stringContaining('only read-only queries') });
    expect(count()).toBe(3);
  });

  it('rejects a PRAGMA with a value unprepared: SQLite applies a flag pragma as it compiles it, refused or not', async () => {
    const before = await query('SELECT name FROM products');
    for (const sql of ['PRAGMA user_version = 5', 'PRAGMA reverse_unordered_selects = 1', 'EXPLAIN PRAGMA query_only = 0', '/* x */ ; PRAGMA main.query_only(false)', 'PRAGMA "query_only"(0)']) {
      const run = await query(sql);
      expect(run.rejected, sql).toMatch(/^a PRAGMA that sets a value is not allowed .*SELECT \* FROM pragma_table_info\('products'\)$/);
    }
    // A pragma whose argument names what to read is a schema question, and answers.
    expect((await query('PRAGMA main.table_info(products)')).result?.content).toMatch(/^cid \| name \| type/);
    // The same query gives the same rows, and the connection is still query_only.
    expect((await query('SELECT name FROM products')).result).toEqual(before.result);
    expect((await query('PRAGMA query_only')).result?.content).toBe('query_only\n1\n(1 row)');
    expect((await query("SELECT name FROM pragma_table_info('products') WHERE pk = 1")).result?.content).toBe('name\nid\n(1 row)');
  });

  it('bounds the text it returns: a huge cell is cut, and rows past maxChars are left out', async () => {
    const big = await query("SELECT printf('%.*c', 10000000, 'x') AS big, 1 AS n");
    expect(big.result?.ok).toBe(true);
    expect(big.result?.content.length).toBeLessThan(70_000);
    expect(big.result?.content).toMatch(/^big \| n\nx+… \[cut: 10000000 characters\] \| 1\n\(1 row\)$/);
    const many = await query("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 50) SELECT x, printf('%.*c', 998, 'y') FROM n", { maxChars: 10_000 });
    expect(many.result).toMatchObject({ ok: true, data: { truncated: true } });
    // 9 rows: each is 1,004 characters as written, and the header counts too.
    expect(many.result?.content).toMatch(/\(first 9 rows; more were left out\)$/);
  });

  it("cuts a wide result at a whole row under the gateway's observation cap by default, and tells the model its row limit", async () => {
    // 100 rows of 200 characters: 20,000 characters of cells, past the gateway's cap on one observation.
    const wide = await query("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 100) SELECT x, printf('%.*c', 196, 'y') AS pad FROM n");
    expect(wide.result?.content.length).toBeLessThan(DEFAULT_MAX_OBSERVATION_CHARS);
    expect(wide.result?.content).toMatch(/\(first \d+ rows; more were left out\)$/);
    expect(createDatabasePlugin({ file }).description).toContain('at most 100 of them');
    expect(createDatabasePlugin({ file, maxRows: 25 }).description).toContain('at most 25 of them');
  });

  it("cuts a result of many narrow columns under the gateway's cap too: the separators and the header count", async () => {
    // The regression: only cell text counted, so 60 one-digit columns made 100 rows of 60
    // characters counted but 237 shown: 24,184 characters, cut by the gateway mid-row, and the
    // "(first N rows; more were left out)" line was lost.
    const columns = Array.from({ length: 60 }, (_, i) => `x % 10 AS c${i}`).join(', ');
    const wide = await query(`WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 500) SELECT ${columns} FROM n`);
    expect(wide.result?.content.length).toBeLessThan(DEFAULT_MAX_OBSERVATION_CHARS);
    expect(wide.result?.content).toMatch(/\n1 \| 1 \| [ |\d]+\n[\s\S]*\(first \d+ rows; more were left out\)$/);
    expect(wide.result?.data).toMatchObject({ truncated: true });
  });

  it('cuts long column names too, so a long alias or unnamed expression leaves room for the rows', async () => {
    // The regression: only cells were cut, so the header of `SELECT 1 AS "<30,000 x>"` went out
    // whole, past maxChars and the gateway's cap, which cut it mid-name: no row, no row count.
    const alias = 'x'.repeat(30_000);
    const long = await query(`SELECT 1 AS "${alias}", 'ok' AS b`);
    expect(long.result?.content.length).toBeLessThan(12_000);
    expect(long.result?.content).toMatch(/^x+… \[cut: 30000 characters\] \| b\n1 \| ok\n\(1 row\)$/);
    expect((long.result?.data as { columns: string[] }).columns).toEqual([expect.stringMatching(/^x+… \[cut: 30000 characters\]$/), 'b']);
  });

  it('never cuts a long cell inside a surrogate pair', async () => {
    // The regression: a cut at an odd length left half an emoji, a lone surrogate, in the observation.
    const run = await query("SELECT replace(printf('%.*c', 100, 'x'), 'x', '😀') AS e", { maxChars: 101 });
    expect(run.result?.content).toBe(`e\n${'😀'.repeat(50)}… [cut: 200 characters]\n(1 row)`);
  });

  it('reports SQL errors as tool errors the model can act on', async () => {
    expect((await query('SELECT * FROM nope')).result).toEqual({ ok: false, content: 'error: no such table: nope' });
    // The regression: better-sqlite3's "Too few parameter values were provided" and "Missing named
    // parameters", about values the tool has no argument for.
    const placeholder = 'the query has a parameter placeholder (?, ?1, :name, @name or $name), and this tool binds no values: write each value into the query as a literal';
    expect((await query('SELECT name FROM products WHERE id = ?')).result).toEqual({ ok: false, content: `error: ${placeholder}` });
    expect((await query('SELECT name FROM products WHERE id = :id')).result).toEqual({ ok: false, content: `error: ${placeholder}` });
    expect((await query('SELECT name FROM products WHERE id = $id')).result).toEqual({ ok: false, content: `error: ${placeholder}` });
    expect((await query('SELEC 1')).result?.content).toMatch(/^error: near "SELEC": syntax error/);
    expect((await query('SELECT 1; SELECT 2')).result?.content).toMatch(/more than one statement/);
  });

  it('says a database locked by a writer is locked within the time limit, rather than waiting past the tool\'s own limit', async () => {
    // better-sqlite3 waits 5 s for a lock: the process runtime killed the query at timeLimitMs + 1 s first.
    const writer = openSqlite(file);
    writer.exec("BEGIN EXCLUSIVE; INSERT INTO products(name) VALUES ('held')");
    try {
      expect((await query('SELECT count(*) AS n FROM products', { timeLimitMs: 100 })).result).toEqual({
        ok: false,
        content: 'error: the database is locked: another program was writing to it for the whole 100 ms time limit; try the query again later',
      });
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
    expect((await query('SELECT count(*) AS n FROM products', { timeLimitMs: 100 })).result?.content).toBe('n\n3\n(1 row)');
  });

  it('never creates a missing database file', async () => {
    const missing = path.join(dir, 'missing.sqlite');
    const run = await runScriptedCall(inlineTool(createDatabasePlugin({ file: missing })), { pieces: [{ kind: 'field', path: ['query'], value: 'SELECT 1' }], args: { query: 'SELECT 1' } });
    expect(run.result?.ok).toBe(false);
    expect(run.result?.content).toMatch(/^error: cannot open the database/);
    expect(existsSync(missing)).toBe(false);
  });

  it('configures the default module from its URL query, then the environment', () => {
    const url = 'file:///app/plugins/database/database-plugin.ts?file=%2Fdata%2Fshop.sqlite&maxRows=10';
    expect(databaseModuleOptions(url, { CONVEYOR_DATABASE_FILE: '/other.sqlite', CONVEYOR_DATABASE_TIME_LIMIT_MS: '1500' })).toEqual({
      file: '/data/shop.sqlite',
      maxRows: 10,
      timeLimitMs: 1500,
    });
    expect(databaseModuleOptions('file:///app/database-plugin.ts', { CONVEYOR_DATABASE_FILE: '/other.sqlite', CONVEYOR_DATABASE_TIME_LIMIT_MS: '500' })).toEqual({
      file: '/other.sqlite',
      timeLimitMs: 500,
    });
  });
});

describe('database plugin: a file replaced under its open connection', () => {
  // A kept process (reuseProcess) holds its connection across calls: a deploy that swaps the file
  // (write a new one, rename it over the old) must be seen by the next query.
  it('answers from the new file once the old one was renamed over', async () => {
    const swapped = path.join(dir, 'swapped.sqlite');
    const write = (target: string, name: string) => {
      const db = openSqlite(target);
      db.exec(`CREATE TABLE t(name TEXT); INSERT INTO t VALUES ('${name}');`);
      db.close();
    };
    write(swapped, 'before');
    const ask = () => runScriptedCall(inlineTool(createDatabasePlugin({ file: swapped })), { args: { query: 'SELECT name FROM t' } });
    expect((await ask()).result?.content).toContain('before');
    write(`${swapped}.next`, 'after');
    renameSync(`${swapped}.next`, swapped);
    expect((await ask()).result?.content).toContain('after');
  });
});
