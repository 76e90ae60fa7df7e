import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabasePlugin } from '../../plugins/database/database-plugin.ts';
import { closeReadOnlyDatabases } from '../../plugins/database/read-only-query.ts';
import { formatTable, tableCell } from '../../plugins/database/result-table.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { openSqlite } from '../../plugins/sqlite-driver.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const dir = suiteTempDir('conveyor-database-table-');
const file = path.join(dir, 'odd.sqlite');

beforeAll(() => {
  const db = openSqlite(file);
  db.exec(`CREATE TABLE t("a|b" TEXT, "two
lines" TEXT); INSERT INTO t VALUES ('x', 'y');`);
  db.close();
});

afterAll(closeReadOnlyDatabases);

const query = async (sql: string) => {
  const run = await runScriptedCall(inlineTool(createDatabasePlugin({ file })), { pieces: [{ kind: 'field', path: ['query'], value: sql }], args: { query: sql } });
  return run.result!;
};

describe('database table output', () => {
  it('quotes column names by the cell rule, so the header stays one line with one name per column', async () => {
    // The regression: the header was columns.join(' | '), so a name with a newline spanned two
    // lines and a name with "|" read as two columns.
    const result = await query("SELECT 'a|b', 'line1\nline2', NULL, 'NULL', ''");
    const lines = result.content.split('\n');
    expect(lines).toHaveLength(3);
    // SQLite names an expression column by its text: `'NULL'` and `''` (quotes included) are unambiguous.
    expect(lines[0]).toBe(`"'a|b'" | "'line1\\nline2'" | "NULL" | 'NULL' | ''`);
    expect(lines[0]!.split(' | ')).toHaveLength(5);
    expect((await query('SELECT * FROM t')).content).toBe('"a|b" | "two\\nlines"\nx | y\n(1 row)');
  });

  it('tells SQL NULL from the text NULL, and shows empty text', async () => {
    const result = await query("SELECT NULL AS a, 'NULL' AS b, 'null' AS c, '' AS d, ' pad' AS e, '\"q\"' AS f, 'plain text' AS g");
    expect(result.content.split('\n')[1]).toBe('NULL | "NULL" | "null" | "" | " pad" | "\\"q\\"" | plain text');
    expect(result.data?.['rows']).toEqual([[null, 'NULL', 'null', '', ' pad', '"q"', 'plain text']]);
  });

  it('keeps every row on one line whatever line separator a value holds', () => {
    for (const separator of ['\r', '\t', '\v', '\f', '\u001c', '\u0085', '\u2028', '\u2029']) {
      const table = formatTable({ ok: true, columns: [`c${separator}1`], rows: [[`a${separator}b`]], truncated: false });
      expect(table.split(/\r\n|[\n\r\v\f\u001c-\u001e\u0085\u2028\u2029]/), JSON.stringify(separator)).toHaveLength(3);
      expect(JSON.parse(table.split('\n')[1]!)).toBe(`a${separator}b`);
    }
    expect([1n, 2.5, 9007199254740993n, 'café'].map(tableCell)).toEqual(['1', '2.5', '9007199254740993', 'café']);
  });

  it('writes a REAL as a REAL and an INTEGER as an INTEGER, as sqlite3 and Python do', async () => {
    // The regression: REALs reached the table as JS numbers, so 1.0 read as the integer 1 and
    // 1e20 as a 21-digit integer; 9e999 (infinity) became null in data.rows, like SQL NULL.
    const result = await query('SELECT 1.0, 2.5, CAST(3 AS REAL), 1e20, 9e999, -9e999, 7, 9007199254740993, -0.0, NULL');
    expect(result.content.split('\n')[1]).toBe('1.0 | 2.5 | 3.0 | 1e+20 | Inf | -Inf | 7 | 9007199254740993 | 0.0 | NULL');
    expect(result.data?.['rows']).toEqual([[1, 2.5, 3, 1e20, 'Infinity', '-Infinity', 7, '9007199254740993', 0, null]]);
  });

  it("writes a BLOB as SQLite's X'…' literal, cut after 32 bytes, and quotes text that looks like one", async () => {
    // The regression: a blob was `<blob 3 bytes>`, the same as a text cell holding those words.
    const result = await query("SELECT X'6b6574', X'', zeroblob(100), '<blob 3 bytes>', 'X''6b6574''', 'x''00'''");
    const hex32 = '00'.repeat(32);
    expect(result.content.split('\n')[1]).toBe(`X'6b6574' | X'' | X'${hex32}…' (100 bytes) | <blob 3 bytes> | "X'6b6574'" | "x'00'"`);
    expect(tableCell(new Uint8Array([0xff, 0x0a]))).toBe("X'ff0a'");
  });

  it("tells a BLOB from a TEXT cell holding its X'…' literal in data.rows too", async () => {
    // The regression: data.rows had the blob as the string "X'6b6574'", the same as the text
    // 'X''6b6574''' beside it (the table quotes that text; data.rows could not).
    const result = await query("SELECT X'6b6574', 'X''6b6574''', X'', zeroblob(100), CAST('kettle' AS BLOB), typeof(X'00')");
    const hex32 = '00'.repeat(32);
    expect(result.data?.['rows']).toEqual([
      [{ $blob: '6b6574', bytes: 3 }, "X'6b6574'", { $blob: '', bytes: 0 }, { $blob: hex32, bytes: 100 }, { $blob: '6b6574746c65', bytes: 6 }, 'blob'],
    ]);
    // The table is as before: the blob bare, the text quoted.
    expect(result.content.split('\n')[1]).toBe(`X'6b6574' | "X'6b6574'" | X'' | X'${hex32}…' (100 bytes) | X'6b6574746c65' | blob`);
  });

  it("does not show the database file's host path (PRAGMA database_list)", async () => {
    for (const sql of ['PRAGMA database_list', 'pragma main.DATABASE_LIST', 'SELECT file FROM pragma_database_list', 'SELECT * FROM "pragma_database_list"()']) {
      const result = await query(sql);
      expect(result, sql).toEqual({ ok: false, content: expect.stringMatching(/^error: PRAGMA database_list is not available/) });
      expect(result.content, sql).not.toContain(dir);
    }
    expect((await query('PRAGMA table_list')).ok).toBe(true);
  });
});
