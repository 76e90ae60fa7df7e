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

/** Bytes of a BLOB shown; a longer one is cut, its length said. 32 bytes are 64 hex digits: a row stays readable. */
export const BLOB_SHOWN_BYTES = 32;

/**
 * A BLOB as SQLite's own literal (`X'6b6574'`, what the sqlite3 shell's quote mode writes), its
 * first BLOB_SHOWN_BYTES only: `X'0000…' (100 bytes)`. It was `<blob 3 bytes>`, which a text cell
 * holding those words read the same as; text that starts like the literal is quoted instead
 * (result-table.ts), so a bare X'…' is always a blob.
 */
function blobText(value: Uint8Array): string {
  const hex = shownHex(value);
  return value.length > BLOB_SHOWN_BYTES ? `X'${hex}…' (${value.length} bytes)` : `X'${hex}'`;
}

function shownHex(value: Uint8Array): string {
  return Buffer.from(value.buffer, value.byteOffset, Math.min(value.length, BLOB_SHOWN_BYTES)).toString('hex');
}

/** The cell's text before any quoting: numbers by their storage class, a blob as X'…'. */
export function sqlValueText(value: Exclude<SqlValue, string | null>): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return realText(value);
  return blobText(value);
}

/**
 * A BLOB in `data.rows`: its hex digits (the first BLOB_SHOWN_BYTES, as the table cuts it) and its
 * length, so a reader sees the blob is cut where `bytes` is more than half the digits. An object,
 * because every other cell is a JSON string, number or null: as the string X'0102' it read the same
 * as a TEXT cell holding those characters (the table quotes that text; data.rows could not).
 */
export type BlobJson = { $blob: string; bytes: number };

/** A cell of `data.rows`. */
export type SqlJson = string | number | null | BlobJson;

/**
 * The cell in `data.rows`: exact integers stay exact (as strings past 2^53), infinities are the
 * strings "Infinity" and "-Infinity" (JSON has no infinity, and null is SQL NULL), a blob is a
 * BlobJson (JSON has no bytes).
 */
export function sqlValueJson(value: SqlValue): SqlJson {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value instanceof Uint8Array) return { $blob: shownHex(value), bytes: value.length };
  return value;
}
