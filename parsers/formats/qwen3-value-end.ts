import type { MarkerSearch } from '../marker-search.ts';
import { FUNCTION, FUNCTION_END, isSpace, PARAMETER, PARAMETER_END, TOOL_CALL, TOOL_CALL_END } from './qwen3-function-opener.ts';

/** What a Qwen3ValueEnd made of the text given to it. */
export type ValueStep =
  /** `text` belongs to the value; what is left is held until what follows it shows. */
  | { kind: 'more'; text: string }
  /** `text` is the value's last part, the structural `marker` ends it, and `rest` follows the marker. */
  | { kind: 'end'; text: string; marker: string; rest: string };

/** The call a value belongs to, as far as telling its markup from the model's text needs it. */
export interface ValueOwner {
  /** The tool's parameters in the request's schema; undefined when there are none to go by. */
  readonly schema: ReadonlyMap<string, unknown> | undefined;
  /** Whether the call already has this parameter. */
  has(name: string): boolean;
}

const MARKERS = [PARAMETER_END, FUNCTION_END, TOOL_CALL_END, PARAMETER, FUNCTION, TOOL_CALL];
const LONGEST_MARKER = longest(MARKERS);
const INDENT = /^[ \t]*$/;

/** What must follow a closing marker, after whitespace, for it to be structure (else it is the value's text). */
const FOLLOWERS = new Map<string, readonly string[]>([
  [PARAMETER_END, [PARAMETER, FUNCTION_END, TOOL_CALL_END]],
  // Not `<tool_call>` or `<function=` straight after: decided at the tag, before any name, they
  // let `END = "</function><tool_call>"` in code cut the value (vLLM too takes only `</tool_call>`).
  [FUNCTION_END, [TOOL_CALL_END]],
  [TOOL_CALL_END, [TOOL_CALL, FUNCTION]],
]);

/** Which parameter names make a `<parameter=name>` structure, and how long one may be. */
interface NameRule {
  accepts(name: string): boolean;
  longest: number;
}

/**
 * Where a Qwen3-Coder parameter value ends. A model that writes a chat template, a tool parser
 * or docs writes this format's markup inside a value, and a value cut at the first `</function>`
 * or `<parameter=x>` in it runs the call with a value the model never meant (vLLM's qwen3_coder
 * learned the same). So a marker in a value is structure only when what follows it is:
 *
 * - `</parameter>`, then whitespace, then `<parameter=name>` (a name in the tool's schema; with
 *   none, any `<parameter=`), `</function>` or `</tool_call>`;
 * - `</tool_call>` (no `</parameter>` or `</function>` before it), then whitespace, then
 *   `<tool_call>` or `<function=`; `</function>` (no `</parameter>` before it), then whitespace,
 *   then a `</tool_call>` that is structure as just said;
 * - a line `<parameter=name>` (no `</parameter>` before it): a name in the schema (with none,
 *   any name) that the call has not had, nor is this parameter's;
 * - any of these where the output ends (`end()`), the text still undecided then.
 *
 * A line is a line's start after indentation (spaces, tabs). Markup the value opens itself (a
 * line `<tool_call>` or `<function=`, a line `<parameter=` that is not the next parameter: an
 * example call) is closed by the value's own closing markers, which are then text whatever
 * follows them (one that closes an outer part closes the inner ones too); inside the example's
 * parameter only its `</parameter>` counts, and while any is open no line `<parameter=` is the
 * next parameter. A closing marker for markup the value never opened is a candidate, as above.
 * A candidate is held (never part of the value yet) until the character that decides it; each
 * character is read once there (a long run of whitespace after `</parameter>` is not read again
 * with each delta), so the decisions, and the events, do not depend on how the text is split.
 */
export class Qwen3ValueEnd {
  readonly #name: string;
  readonly #owner: ValueOwner;
  /** Markup the value opened, innermost last: the closing markers it waits for. */
  readonly #open: string[] = [];
  /** How many of each closing marker #open holds (a lookup that does not read it all). */
  readonly #opened = new Map<string, number>();
  /** Text at the end of the last input that may be the start of a marker. */
  #partial = '';
  #candidate: Candidate | undefined;
  /** Whether the value so far is empty or ends a line, then spaces or tabs (a `<parameter=` here starts a line). */
  #lineStart = true;

  /** @param name the parameter whose value this is */
  constructor(name: string, owner: ValueOwner) {
    this.#name = name;
    this.#owner = owner;
  }

  /** Whether text is held, undecided: `push('', true)` settles it. */
  get holds(): boolean {
    return this.#partial !== '' || this.#candidate !== undefined;
  }

  /** Reads the next input of the value; `final`: the output ended, and a held candidate is structure. */
  push(input: string, final: boolean): ValueStep {
    let text = '';
    input = this.#partial + input;
    this.#partial = '';
    for (;;) {
      const candidate = this.#candidate;
      if (candidate !== undefined) {
        const structure = candidate.read(input, final);
        if (structure === undefined) return { kind: 'more', text };
        this.#candidate = undefined;
        // What it read past its marker is read again, as the value's or as what follows it.
        input = candidate.after(input);
        if (structure) return { kind: 'end', text, marker: candidate.marker, rest: input };
        // A line <parameter= that is not the next parameter opens one inside the value.
        if (candidate.marker === PARAMETER) this.#push(PARAMETER_END);
        text += candidate.marker;
        this.#lineStart = false;
        continue;
      }
      const found = findMarker(input);
      if (!found.found) {
        const certain = final ? input.length : found.holdFrom;
        text += this.#take(input.slice(0, certain));
        this.#partial = input.slice(certain);
        return { kind: 'more', text };
      }
      text += this.#take(input.slice(0, found.index));
      input = input.slice(found.index + found.marker.length);
      this.#candidate = this.#candidateAt(found.marker);
      if (this.#candidate === undefined) {
        text += found.marker;
        this.#lineStart = false;
      }
    }
  }

  /** Text known to be the value's. */
  #take(text: string): string {
    const nl = text.lastIndexOf('\n');
    if (nl === -1 && !this.#lineStart) return text;
    this.#lineStart = (nl !== -1 || this.#lineStart) && INDENT.test(nl === -1 ? text : text.slice(nl + 1));
    return text;
  }

  /** The candidate a marker in the value starts, or undefined when the marker is text (noting what it opens or closes). */
  #candidateAt(marker: string): Candidate | undefined {
    const top = this.#open.at(-1);
    switch (marker) {
      case TOOL_CALL:
      case FUNCTION:
        // Inside an example's parameter only its </parameter> counts (its value is text), and
        // "use <function=name> tags" in a sentence opens nothing.
        if (top !== PARAMETER_END && this.#lineStart) this.#push(marker === TOOL_CALL ? TOOL_CALL_END : FUNCTION_END);
        return undefined;
      case PARAMETER:
        if (!this.#lineStart) return undefined;
        if (top !== undefined) {
          this.#push(PARAMETER_END);
          return undefined;
        }
        return new Candidate(PARAMETER, [], this.#nextParameter());
      default:
        // Inside an example's parameter a closing marker other than its own is its text.
        if (top === PARAMETER_END && marker !== PARAMETER_END) return undefined;
        if ((this.#opened.get(marker) ?? 0) === 0) {
          return new Candidate(marker, FOLLOWERS.get(marker)!, marker === PARAMETER_END ? this.#schemaParameter() : undefined);
        }
        // It closes what is open inside it too (an example that left a part open).
        for (let close = this.#pop(); close !== marker; close = this.#pop());
        return undefined;
    }
  }

  #pop(): string {
    const close = this.#open.pop()!;
    this.#opened.set(close, this.#opened.get(close)! - 1);
    return close;
  }

  #push(close: string): void {
    this.#open.push(close);
    this.#opened.set(close, (this.#opened.get(close) ?? 0) + 1);
  }

  /** After `</parameter>`: a name in the schema (a repeat is then the call's error); with none, any `<parameter=`. */
  #schemaParameter(): NameRule | undefined {
    const schema = this.#owner.schema;
    if (schema === undefined) return undefined;
    return { accepts: (name) => schema.has(name), longest: longest(schema.keys()) };
  }

  /** A line `<parameter=name>` with no `</parameter>` before it: a parameter the call may still have. */
  #nextParameter(): NameRule {
    const schema = this.#owner.schema;
    const accepts = (name: string) => name !== '' && name !== this.#name && !this.#owner.has(name) && (schema === undefined || schema.has(name));
    return { accepts, longest: schema === undefined ? Infinity : longest(schema.keys()) };
  }
}

/**
 * The first marker in `text`, or where one may begin at its end. Every marker starts with "<"
 * and holds no other, so only the "<"s are looked at: searchMarkers looked for each marker in
 * turn, through a window of 4,096 characters for each absent one, at every marker of a value
 * full of them (one large delta).
 */
function findMarker(text: string): MarkerSearch {
  for (let at = text.indexOf('<'); at !== -1; at = text.indexOf('<', at + 1)) {
    for (const marker of MARKERS) if (text.startsWith(marker, at)) return { found: true, index: at, marker };
    if (text.length - at < LONGEST_MARKER) {
      const tail = text.slice(at);
      if (MARKERS.some((marker) => marker.startsWith(tail))) return { found: false, holdFrom: at };
    }
  }
  return { found: false, holdFrom: text.length };
}

function longest(names: Iterable<string>): number {
  let n = 0;
  for (const name of names) n = Math.max(n, name.length);
  return n;
}

/**
 * A marker that may end the value, and the text after it read so far: whitespace, then one of
 * `followers`, then (for `<parameter=`, when `names` is given) a name and its `>` (for
 * `</function>`, `</tool_call>`, then what must follow that). A `<parameter=`
 * candidate itself starts at the name. Each character is read once, from the input it came in:
 * what was read before is only appended to (indexing a string built by appending flattens it).
 */
class Candidate {
  readonly marker: string;
  /** What came after the marker in earlier inputs, all of it read and undecided. */
  #read = '';
  #followers: readonly string[];
  readonly #names: NameRule | undefined;
  #phase: 'space' | 'follower' | 'name';
  /** Where the follower or the name being read starts, counted from the marker's end. */
  #from = 0;

  constructor(marker: string, followers: readonly string[], names: NameRule | undefined) {
    this.marker = marker;
    this.#followers = followers;
    this.#names = names;
    this.#phase = marker === PARAMETER ? 'name' : 'space';
  }

  /** Reads the next input: whether the marker is structure, or undefined while undecided (never at the output's end). */
  read(text: string, final: boolean): boolean | undefined {
    const base = this.#read.length;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      const at = base + i;
      if (this.#phase === 'space') {
        if (isSpace(c)) continue;
        this.#phase = 'follower';
        this.#from = at;
      }
      if (this.#phase === 'follower') {
        const k = at - this.#from;
        this.#followers = this.#followers.filter((f) => f[k] === c);
        const [follower] = this.#followers;
        if (follower === undefined) return false;
        if (k + 1 < follower.length) continue;
        if (follower === TOOL_CALL_END && this.marker === FUNCTION_END) {
          // `</function></tool_call>")` is a parser's code: the </tool_call> must be structure too.
          this.#followers = FOLLOWERS.get(TOOL_CALL_END)!;
          this.#phase = 'space';
          continue;
        }
        if (follower !== PARAMETER || this.#names === undefined) return true;
        this.#phase = 'name';
        this.#from = at + 1;
        continue;
      }
      // A name ends at its ">"; whitespace or "<" first, or a name longer than any it may be, is no tag.
      if (c === '>') return this.#names!.accepts((this.#read + text.slice(0, i)).slice(this.#from));
      if (isSpace(c) || c === '<' || at - this.#from >= this.#names!.longest) return false;
    }
    if (final) return true;
    this.#read += text;
    return undefined;
  }

  /** Once decided, what came after the marker (`text`: the input that decided it), to be read again. */
  after(text: string): string {
    return this.#read + text;
  }
}
