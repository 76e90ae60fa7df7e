import { scanEvent, type JsonPath } from './json-scan-event.ts';
import { JsonStructureScanner, type JsonStructureOptions } from './json-structure-scanner.ts';

export interface JsonStringOptions extends JsonStructureOptions {
  /** Strings at exactly these paths are also streamed as `line` events. */
  linePaths?: readonly JsonPath[];
  /** Stream every string value as `fragment` events too. Default false. */
  fragments?: boolean;
}

/** The state this file sets, numbered as in json-structure-scanner.ts (see there). */
const S = {
  STRING: 6,
} as const;

/**
 * The string being read (a key or a value), built from its runs and decoded escapes, and
 * streamed while it is read: a string at one of `linePaths` as `line` events (each as soon as
 * its `\n` escape is complete, the last one at the closing quote), every string value as
 * `fragment` events with `fragments`. IncrementalJsonScanner reads the characters; its fast
 * paths append to `str` and `line` themselves.
 */
export abstract class JsonStringBuilder extends JsonStructureScanner {
  readonly #linePaths: readonly JsonPath[];
  protected readonly fragments: boolean;

  // The string being read, decoded. In line mode, only its completed lines: the current line is
  // in `line`, so each run is appended once, not twice.
  protected str = '';
  protected isKey = false;
  protected lineMode = false;
  /** In line mode, the string's path: shared by its line events, which only read it. */
  #linePath: JsonPath = [];
  protected line = '';
  protected lineNo = 0;
  /** Length of `str` already reported as fragments. */
  #fragmentFrom = 0;

  constructor(options: JsonStringOptions) {
    super(options);
    this.#linePaths = options.linePaths ?? [];
    this.fragments = !!(options.fragments ?? false);
  }

  protected beginString(isKey: boolean): void {
    this.state = S.STRING;
    this.isKey = isKey;
    this.str = '';
    this.#fragmentFrom = 0;
    this.lineMode = !isKey && this.#linePaths.length > 0 && this.#isLinePath();
    if (this.lineMode) this.#linePath = this.path.slice();
    this.line = '';
    this.lineNo = 0;
  }

  /** Whether the current path is one of `linePaths` (a loop: no closure per string). */
  #isLinePath(): boolean {
    const linePaths = this.#linePaths;
    for (let k = 0; k < linePaths.length; k++) if (pathEquals(linePaths[k]!, this.path)) return true;
    return false;
  }

  /** Appends characters as written: no quote, backslash or control character. */
  protected appendRun(run: string): void {
    // Raw "\n" cannot occur in a JSON string, so a run never completes a line.
    if (this.lineMode === true) this.line += run;
    else this.str += run;
  }

  /** Appends what an escape stands for; the escape ends just before `at`. */
  protected appendDecoded(ch: string, at: number): void {
    if (!this.lineMode) {
      this.str += ch;
      return;
    }
    this.line += ch;
    if (ch === '\n') {
      this.lineNo += 1;
      this.emit(scanEvent('line', this.#linePath, at, undefined, this.line, this.lineNo, undefined, undefined));
      this.str += this.line;
      this.line = '';
    }
  }

  /** The string read so far, decoded. */
  protected current(): string {
    return this.lineMode ? this.str + this.line : this.str;
  }

  /** The closing quote has been read; `at` is just after it. */
  protected endString(at: number): void {
    const str = this.current();
    this.str = '';
    if (this.isKey) {
      this.endKey(str, at);
      return;
    }
    this.emitFragment(at, false, str);
    if (this.lineMode && this.line.length > 0) {
      this.lineNo += 1;
      this.emit(scanEvent('line', this.#linePath, at, undefined, this.line, this.lineNo, undefined, undefined));
    }
    this.lineMode = false;
    this.line = '';
    this.endValue(str, at);
  }

  protected emitFragment(at: number, partial: boolean, str = this.current()): void {
    if (!this.fragments || this.isKey) return;
    let until = str.length;
    // Never end a partial fragment between the halves of a surrogate pair.
    if (partial && until > this.#fragmentFrom && isHighSurrogate(str.charCodeAt(until - 1))) until -= 1;
    if (until <= this.#fragmentFrom) return;
    this.emit(scanEvent('fragment', this.path.slice(), at, undefined, str.slice(this.#fragmentFrom, until), undefined, undefined, undefined));
    this.#fragmentFrom = until;
  }
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function pathEquals(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
