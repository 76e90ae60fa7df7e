/** What the incremental JSON scanner reports; `at` is always an absolute character offset. */

export type JsonPath = Array<string | number>;

export type JsonScanEvent =
  /** A key of an object at depth < `keyDepth` has closed; `path` ends with the key. */
  | { type: 'key'; path: JsonPath; at: number }
  /** A value at depth <= `openDepth` begins at `at` (its first character). */
  | { type: 'open'; path: JsonPath; kind: 'object' | 'array' | 'string' | 'number' | 'literal'; at: number }
  /** A value at 1 <= depth <= `maxFieldDepth` has closed. */
  | { type: 'field'; path: JsonPath; value: unknown; at: number }
  /** A completed line of a string at one of `linePaths` ("\n" included; absent only on the last line). */
  | { type: 'line'; path: JsonPath; text: string; lineNo: number; at: number }
  /** Decoded text of a string value so far (with `fragments`); where a fragment ends depends on the split. */
  | { type: 'fragment'; path: JsonPath; text: string; at: number }
  /** The top-level value is complete. */
  | { type: 'done'; value: unknown; at: number }
  | { type: 'error'; reason: string; at: number };
