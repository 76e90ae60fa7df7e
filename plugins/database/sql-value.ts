/**
 * One cell as better-sqlite3 returns it with safe integers on: INTEGER as bigint, REAL as number,
 * TEXT as string, BLOB as a Buffer, NULL as null. Keeping the storage class until the cell is
 * written is what lets a REAL 1.0 read as 1.0 and not as the INTEGER 1.
 */
export type SqlValue = bigint | number | string | Uint8Array | null;

/** Past this a whole REAL is written with an exponent, as Python's repr does (1e+16, not 10000000000000000.0). */
const EXPONENT_FROM = 1e16;

/**
 * A REAL as sqlite3's shell and Python write it: always with a point or an exponent (1.0,
 * 1e+20), infinity as SQLite's Inf. Other digits are the shortest that read back the same.
 */
export function realText(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? 'Inf' : '-Inf';
  if (!Number.isInteger(value)) return String(value);
  if (Math.abs(value) >= EXPONENT_FROM) return value.toExponential();
  return `${value === 0 ? 0 : value}.0`;
}

/** The cell's text before any quoting: numbers by their storage class, a blob described. */
export function sqlValueText(value: Exclude<SqlValue, string | null>): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return realText(value);
  return `<blob ${value.length} bytes>`;
}

/**
 * The cell in `data.rows`: exact integers stay exact (as strings past 2^53), infinities are the
 * strings "Infinity" and "-Infinity" (JSON has no infinity, and null is SQL NULL), blobs are
 * described, not dumped.
 */
export function sqlValueJson(value: SqlValue): string | number | null {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value instanceof Uint8Array) return sqlValueText(value);
  return value;
}
