/** What the incremental JSON scanner reports; `at` is always an absolute character offset. */

export type JsonPath = Array<string | number>;

export type JsonScanEvent =
  /** A key of an object at depth < `keyDepth` has closed; `path` ends with the key. */
  | { type: 'key'; path: JsonPath; at: number }
  /** A value at depth <= `openDepth` begins at `at` (its first character). */
  | { type: 'open'; path: JsonPath; kind: ValueKind; at: number }
  /** A value at 1 <= depth <= `maxFieldDepth` has closed. */
  | { type: 'field'; path: JsonPath; value: unknown; at: number }
  /** A completed line of a string at one of `linePaths` ("\n" included; absent only on the last line). */
  | { type: 'line'; path: JsonPath; text: string; lineNo: number; at: number }
  /** Decoded text of a string value so far (with `fragments`); where a fragment ends depends on the split. */
  | { type: 'fragment'; path: JsonPath; text: string; at: number }
  /** The top-level value is complete. */
  | { type: 'done'; value: unknown; at: number }
  | { type: 'error'; reason: string; at: number };

export type ValueKind = 'object' | 'array' | 'string' | 'number' | 'literal';

/**
 * Every event is made with all the fields (those its type does not use are undefined), so that
 * all have one shape: the format parsers' `switch (e.type)` and `e.at` stay monomorphic loads
 * instead of megamorphic ones over seven shapes. exactShape() hands out the declared shapes.
 */
export function scanEvent(
  type: JsonScanEvent['type'],
  path: JsonPath | undefined,
  at: number,
  value: unknown,
  text: string | undefined,
  lineNo: number | undefined,
  kind: ValueKind | undefined,
  reason: string | undefined,
): JsonScanEvent {
  return { type, path, at, value, text, lineNo, kind, reason } as JsonScanEvent;
}

/** The event with only its type's fields, as JsonScanEvent declares it. */
export function exactShape(e: JsonScanEvent): JsonScanEvent {
  switch (e.type) {
    case 'key':
      return { type: 'key', path: e.path, at: e.at };
    case 'open':
      return { type: 'open', path: e.path, kind: e.kind, at: e.at };
    case 'field':
      return { type: 'field', path: e.path, value: e.value, at: e.at };
    case 'line':
      return { type: 'line', path: e.path, text: e.text, lineNo: e.lineNo, at: e.at };
    case 'fragment':
      return { type: 'fragment', path: e.path, text: e.text, at: e.at };
    case 'done':
      return { type: 'done', value: e.value, at: e.at };
    case 'error':
      return { type: 'error', reason: e.reason, at: e.at };
  }
}
