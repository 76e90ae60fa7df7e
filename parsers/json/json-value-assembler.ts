import { exactShape, scanEvent, type JsonPath, type JsonScanEvent, type ValueKind } from './json-scan-event.ts';

export interface JsonStructureOptions {
  /** Emit `field` for values with 1 <= depth <= this (depth = path length). Default: every depth. */
  maxFieldDepth?: number;
  /** Also emit `field` for closed objects and arrays, not only for leaves. Default true. */
  containerFields?: boolean;
  /** Emit `key` for the keys of objects at depth < this. Default 0 (none). */
  keyDepth?: number;
  /** Emit `open` for values at depth <= this. Default -1 (none). */
  openDepth?: number;
  /** Deeper nesting is reported as malformed (bounds the work per emitted path). Default 256. */
  maxNesting?: number;
  /**
   * Objects at or inside these paths may not repeat a key: the repeat fails the scan at its
   * closing quote, where it becomes certain. Default none, as JSON.parse (the last one wins).
   */
  uniqueKeysUnder?: readonly JsonPath[];
  /**
   * Inside this top-level key, depths count from one level down: a wrapper such as OpenAI's
   * `{"function": {"name": …}}` gets the events its contents would get unwrapped, and an
   * unwrapped object no more than its own (deeper limits for all would cost events on every
   * argument of every call).
   */
  unwrapKey?: string;
}

/** The states this file sets, numbered as in json-structure-scanner.ts (see there). */
const S = {
  VALUE: 0,
  VALUE_OR_ARRAY_END: 1,
  KEY_OR_OBJECT_END: 2,
  COLON: 4,
  AFTER_VALUE: 5,
  DONE: 18,
  FAILED: 19,
} as const;

interface Frame {
  isArray: boolean;
  container: Record<string, unknown> | unknown[];
  /** The key whose value is being read (objects). */
  key: string;
}

const NO_EVENTS: readonly JsonScanEvent[] = Object.freeze([]);

/**
 * The scanner's output side, apart from reading characters: the open containers and the value
 * they assemble (as JSON.parse would, `__proto__` an own key; but a number no double holds is
 * its literal: see jsonNumberValue), the path of the value being read, the failure, and the
 * events, queued until taken. JsonStructureScanner reads the characters outside strings and
 * IncrementalJsonScanner the strings; they tell it what opened and closed.
 */
export abstract class JsonValueAssembler {
  readonly #maxFieldDepth: number;
  readonly #containerFields: boolean;
  readonly #keyDepth: number;
  readonly #openDepth: number;
  readonly #maxNesting: number;
  readonly #uniqueKeysUnder: readonly JsonPath[];
  readonly #unwrapKey: string | undefined;
  /** Whether the top-level key being read is `unwrapKey` (set as each top-level key closes). */
  #inWrapper = false;

  protected state: number = S.VALUE;
  /** Characters consumed so far. */
  protected consumed = 0;
  /** Created with its first event: a `[]` pushed onto grows to 17 slots first. */
  protected events: JsonScanEvent[] | undefined;
  readonly #stack: Frame[] = [];
  /** Path of the value being read: one entry per open container. */
  protected readonly path: JsonPath = [];
  #value: unknown = undefined;
  #error: { reason: string; at: number } | undefined;

  constructor(options: JsonStructureOptions) {
    this.#maxFieldDepth = options.maxFieldDepth ?? Number.POSITIVE_INFINITY;
    this.#containerFields = options.containerFields ?? true;
    this.#keyDepth = options.keyDepth ?? 0;
    this.#openDepth = options.openDepth ?? -1;
    this.#maxNesting = options.maxNesting ?? 256;
    this.#uniqueKeysUnder = options.uniqueKeysUnder ?? [];
    this.#unwrapKey = options.unwrapKey;
  }

  /** The path's length, less the wrapper level inside `unwrapKey`. */
  #depth(): number {
    const length = this.path.length;
    return this.#inWrapper && length > 1 ? length - 1 : length;
  }

  /** Characters consumed so far; the top-level value ends here once `done`. */
  get offset(): number {
    return this.consumed;
  }

  get done(): boolean {
    return this.state === S.DONE;
  }

  get failed(): boolean {
    return this.state === S.FAILED;
  }

  /** The top-level value, once `done`. */
  get value(): unknown {
    return this.#value;
  }

  get error(): { reason: string; at: number } | undefined {
    return this.#error;
  }

  /** Whether takeEvents() has anything: most writes inside a long string produce nothing. */
  get hasEvents(): boolean {
    return this.events !== undefined;
  }

  /** Events since the last call, in order. */
  takeEvents(): readonly JsonScanEvent[] {
    const events = this.takeScanEvents();
    return events.length === 0 ? NO_EVENTS : events.map(exactShape);
  }

  /**
   * takeEvents() for the format parsers' hot path: the same events, but each object also
   * carries the other types' fields, undefined (see scanEvent), so a caller must read only the
   * fields of each event's type.
   */
  takeScanEvents(): readonly JsonScanEvent[] {
    // Most writes inside a long string produce nothing: don't allocate for them.
    const events = this.events;
    if (events === undefined) return NO_EVENTS;
    this.events = undefined;
    return events;
  }

  /** How many containers are open. */
  protected get nesting(): number {
    return this.#stack.length;
  }

  /** Whether the innermost open container is an array (one must be open). */
  protected get inArray(): boolean {
    return this.#stack[this.#stack.length - 1]!.isArray;
  }

  /** A value of this kind starts at `at` (its first character). */
  protected startsValue(kind: ValueKind, at: number): void {
    if (this.#depth() <= this.#openDepth) this.emit(scanEvent('open', this.path.slice(), at, undefined, undefined, undefined, kind, undefined));
  }

  /** An object or array opens at `at`; fails if that is nested too deep. */
  protected openContainer(isArray: boolean, at: number): void {
    if (this.#stack.length >= this.#maxNesting) {
      this.fail(`nested deeper than ${this.#maxNesting}`, at, 0);
      return;
    }
    this.#stack.push({ isArray, container: isArray ? [] : {}, key: '' });
    this.path.push(isArray ? 0 : '');
    this.state = isArray ? S.VALUE_OR_ARRAY_END : S.KEY_OR_OBJECT_END;
  }

  /** The innermost container has closed at `at`. */
  protected closeContainer(at: number): void {
    const frame = this.#stack.pop()!;
    this.path.pop();
    this.#place(frame.container, at, true);
  }

  /** Whether `key`, just read, repeats a key of its object where keys must be unique. */
  protected repeatsKey(key: string): boolean {
    const prefixes = this.#uniqueKeysUnder;
    if (prefixes.length === 0) return false;
    const container = this.#stack[this.#stack.length - 1]!.container;
    if (!Object.hasOwn(container, key)) return false;
    // The object's own path is this.path less its last entry, the slot of the key being read.
    const depth = this.path.length - 1;
    for (let k = 0; k < prefixes.length; k++) {
      const prefix = prefixes[k]!;
      if (prefix.length > depth) continue;
      let i = 0;
      while (i < prefix.length && prefix[i] === this.path[i]) i++;
      if (i === prefix.length) return true;
    }
    return false;
  }

  /** A key has closed at `at`. */
  protected endKey(key: string, at: number): void {
    this.#stack[this.#stack.length - 1]!.key = key;
    this.path[this.path.length - 1] = key;
    if (this.path.length === 1 && this.#unwrapKey !== undefined) this.#inWrapper = key === this.#unwrapKey;
    if (this.#depth() - 1 < this.#keyDepth) this.emit(scanEvent('key', this.path.slice(), at, undefined, undefined, undefined, undefined, undefined));
    this.state = S.COLON;
  }

  /** A value (not a container) has closed at `at`. */
  protected endValue(value: unknown, at: number): void {
    this.#place(value, at, false);
  }

  protected emit(event: JsonScanEvent): void {
    if (this.events === undefined) this.events = [event];
    else this.events.push(event);
  }

  /** Records the failure; returns `index` so that `write` can return it. */
  protected fail(reason: string, at: number, index: number): number {
    this.state = S.FAILED;
    this.#error = { reason, at };
    this.consumed = at;
    this.emit(scanEvent('error', undefined, at, undefined, undefined, undefined, undefined, reason));
    return index;
  }

  #place(value: unknown, at: number, isContainer: boolean): void {
    const depth = this.path.length;
    if (depth === 0) {
      this.#value = value;
      this.state = S.DONE;
      this.emit(scanEvent('done', undefined, at, value, undefined, undefined, undefined, undefined));
      return;
    }
    if (this.#depth() <= this.#maxFieldDepth && (!isContainer || this.#containerFields)) {
      this.emit(scanEvent('field', this.path.slice(), at, value, undefined, undefined, undefined, undefined));
    }
    const frame = this.#stack[this.#stack.length - 1]!;
    if (frame.isArray) {
      (frame.container as unknown[]).push(value);
    } else if (frame.key === '__proto__') {
      // As JSON.parse does: an own property, not the prototype.
      Object.defineProperty(frame.container, '__proto__', { value, writable: true, enumerable: true, configurable: true });
    } else {
      (frame.container as Record<string, unknown>)[frame.key] = value;
    }
    this.state = S.AFTER_VALUE;
  }
}
