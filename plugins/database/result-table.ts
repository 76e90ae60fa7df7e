import type { QueryOutcome } from './read-only-query.ts';
import { sqlValueText, type SqlValue } from './sql-value.ts';

/**
 * Text shown bare unless it could be misread: empty, `NULL` in any case (SQL NULL prints as a
 * bare `NULL`), space at either end, a leading `"` (it would read as quoted), a `|` (the column
 * separator) or any control or line-separator character (a row must stay one line, and a
 * header too: column names go through the same rule), or a leading `X'` (a BLOB is written as
 * SQLite's X'…' literal, sql-value.ts).
 */
const AMBIGUOUS_TEXT = /^$|^null$|^\s|\s$|^"|^x'|[|\p{Cc}\u2028\u2029]/iu;

/** JSON.stringify leaves U+0085, U+2028 and U+2029 as they are; readers that split lines on them (Python's splitlines) would see two rows. */
const quoteText = (text: string) => JSON.stringify(text).replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * One table cell or column name: text bare when unambiguous, else as a JSON string; SQL NULL as
 * bare `NULL`; a number by its storage class (REAL 1.0, INTEGER 1).
 */
export function tableCell(value: SqlValue): string {
  if (value === null) return 'NULL';
  if (typeof value !== 'string') return sqlValueText(value);
  return AMBIGUOUS_TEXT.test(value) ? quoteText(value) : value;
}

/**
 * The rows as a compact pipe-separated table the model reads easily, one line per row and the
 * column names first, plus a row count line. `NULL` is SQL NULL; `"NULL"`, `""` and any text
 * that holds `|` or a line break are JSON strings (tableCell).
 *
 * @example
 * formatTable({ ok: true, columns: ['n'], rows: [[1]], truncated: false }) // 'n\n1\n(1 row)'
 */
export function formatTable(result: Extract<QueryOutcome, { ok: true }>): string {
  const lines = [result.columns, ...result.rows].map((row) => row.map(tableCell).join(' | '));
  const count = result.truncated ? `(first ${result.rows.length} rows; more were left out)` : `(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`;
  return `${lines.join('\n')}\n${count}`;
}
