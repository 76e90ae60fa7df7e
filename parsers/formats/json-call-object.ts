import { IncrementalJsonScanner } from '../json/incremental-json-scanner.ts';
import type { Piece } from '../parser-events.ts';
import type { CallRegistry } from './call-options.ts';
import type { EventList } from './event-list.ts';
import { JsonArguments } from './json-arguments.ts';

export interface CallObjectShape {
  /** Keys that may hold the arguments object (`arguments`, Llama's `parameters`). */
  argsKeys: readonly string[];
  /**
   * Strict: the object is a call only if every key is `name`, an args key or one of
   * `extraKeys`; anything else makes it `not-call` (Llama JSON, which has no marker, so any `{`
   * in prose is a candidate). Lenient: other keys are ignored (inside explicit markers).
   */
  strict: boolean;
  extraKeys?: readonly string[];
  /**
   * When to emit call-start: as soon as the name closes (explicit markers), or only once the
   * arguments object has also begun (Llama JSON: `{"name": "Ada", …}` in prose is not yet a call).
   */
  startWhen: 'name' | 'name-and-args';
  /**
   * A call with a name and no arguments key calls with `{}` (Mistral, as vLLM's parser reads it:
   * `tool_call.get("arguments", {})`), rather than being malformed.
   */
  argsOptional?: boolean;
  /**
   * The arguments may also come as a string holding the JSON object (Granite 4, some Qwen
   * fine-tunes: `"arguments": "{\"a\": 1}"`), decoded once as vLLM's hermes parser does. Its
   * pieces and `call-args` (the decoded text) then come when the string closes, not as it streams.
   */
  argsMayBeString?: boolean;
}

export type CallObjectFailure = {
  /** not-call: it was never a call (prose); rejected: a tool not in the whitelist; malformed: a broken call. */
  kind: 'not-call' | 'rejected' | 'malformed';
  reason: string;
};

type Queued = { args: string } | { piece: Piece; lineField?: string };

/**
 * One `{"name": …, "arguments": {…}}` object (hermes, Mistral, Llama JSON), scanned once as it
 * streams. Keys may come in any order: until the name is known, the arguments' raw text and
 * pieces are queued, then released in order right after call-start, so where each event lands
 * depends only on the text, never on the split.
 */
export class JsonCallObject {
  readonly #registry: CallRegistry;
  readonly #shape: CallObjectShape;
  readonly #scanner: IncrementalJsonScanner;
  #status: 'pending' | 'complete' | 'failed' = 'pending';
  #failure: CallObjectFailure | undefined;
  #name: string | undefined;
  #argsKey: string | undefined;
  #argsOpen = false;
  #args: Record<string, unknown> | undefined;
  /** The arguments as a JSON string (argsMayBeString), once it has closed. */
  #argsText: string | undefined;
  #callId: string | undefined;
  #lineField: string | undefined;
  #queue: Queued[] = [];
  /**
   * What writePlain returns for plain text: the call's id while it is argument text of a started
   * call, '' otherwise (queued, or not argument text), undefined once the object is not pending.
   * Kept up to date at each change (#update) so that the per-token path reads one field.
   */
  #plainId: string | undefined = '';

  constructor(registry: CallRegistry, shape: CallObjectShape) {
    this.#registry = registry;
    this.#shape = shape;
    this.#scanner = new IncrementalJsonScanner({
      keyDepth: 1,
      openDepth: 1,
      maxFieldDepth: 1 + registry.maxFieldDepth,
      linePaths: registry.linePaths(shape.argsKeys),
      // A key repeated inside the arguments is malformed, as in JsonArguments.
      uniqueKeysUnder: shape.argsKeys.map((key) => [key]),
    });
  }

  get status(): 'pending' | 'complete' | 'failed' {
    return this.#status;
  }

  get failure(): CallObjectFailure | undefined {
    return this.#failure;
  }

  /** Set once call-start has been emitted. */
  get callId(): string | undefined {
    return this.#callId;
  }

  get args(): Record<string, unknown> {
    return this.#args ?? {};
  }

  /**
   * Scans `text[from, to)` (the first character ever must be the object's "{"); returns where it
   * stopped: `to`, just after the closing brace, or where the object stopped being a valid call.
   */
  write(text: string, from: number, to: number, out: EventList): number {
    if (this.#status !== 'pending') return from;
    const base = this.#scanner.offset - from;
    const stop = this.#scanner.write(text, from, to);
    // Most writes (inside a long string) produce no scanner events, only argument text: this
    // method stays small for them (V8 inlines it), and the rest is #handleEvents.
    if (this.#scanner.hasEvents) return this.#handleEvents(text, from, stop, base, out);
    if (this.#argsOpen) this.#emitArgs(from === 0 && stop === text.length ? text : text.slice(from, stop), out);
    return stop;
  }

  /**
   * All of `text`, if it stays inside a string (see IncrementalJsonScanner.writePlain): returns
   * the call's id if `text` is just its next `call-args` fragment, '' if its events (line pieces,
   * argument text around them; or none) went to `out`. undefined if nothing was consumed.
   */
  writePlain(text: string, out: EventList): string | undefined {
    const plainId = this.#plainId;
    const scanner = this.#scanner;
    if (plainId === undefined || !scanner.writePlain(text)) return undefined;
    if (scanner.hasEvents) {
      this.#handleEvents(text, 0, text.length, scanner.offset - text.length, out);
      return '';
    }
    // Arguments before the name: queued until call-start.
    if (plainId === '' && this.#argsOpen && text.length !== 0) this.#queue.push({ args: text });
    return plainId;
  }

  #handleEvents(text: string, from: number, stop: number, base: number, out: EventList): number {
    let argsFrom = from;
    const events = this.#scanner.takeScanEvents();
    for (let k = 0; k < events.length; k++) {
      const e = events[k]!;
      const at = e.at - base;
      switch (e.type) {
        case 'key': {
          const key = e.path[0] as string;
          if (key === 'name' ? this.#name !== undefined : this.#shape.argsKeys.includes(key) && this.#argsKey !== undefined) {
            return this.#fail('malformed', `duplicate "${key}"`, at);
          }
          if (this.#shape.strict && key !== 'name' && !this.#shape.argsKeys.includes(key) && !this.#shape.extraKeys?.includes(key)) {
            return this.#fail('not-call', `unexpected key "${key}"`, at);
          }
          break;
        }
        case 'open': {
          const key = e.path[0];
          if (e.path.length !== 1 || typeof key !== 'string' || !this.#shape.argsKeys.includes(key)) break;
          if (e.kind === 'string' && this.#shape.argsMayBeString) {
            this.#argsKey = key;
            break;
          }
          if (e.kind !== 'object') return this.#fail(this.#shape.strict ? 'not-call' : 'malformed', `"${key}" must be a JSON object`, at);
          this.#argsKey = key;
          this.#argsOpen = true;
          this.#update();
          argsFrom = at;
          if (!this.#maybeStart(out)) return at;
          break;
        }
        case 'field': {
          if (e.path.length === 1) {
            if (e.path[0] === 'name') {
              if (typeof e.value !== 'string') return this.#fail(this.#shape.strict ? 'not-call' : 'malformed', '"name" must be a string', at);
              this.#name = e.value;
              if (!this.#maybeStart(out)) return at;
            } else if (e.path[0] === this.#argsKey && typeof e.value === 'string') {
              this.#argsText = e.value;
            } else if (e.path[0] === this.#argsKey) {
              this.#emitArgs(text.slice(argsFrom, at), out);
              this.#argsOpen = false;
              this.#update();
              this.#args = e.value as Record<string, unknown>;
            }
          } else if (e.path[0] === this.#argsKey) {
            this.#emitArgs(text.slice(argsFrom, at), out);
            argsFrom = at;
            this.#emitPiece({ kind: 'field', path: e.path.slice(1), value: e.value }, undefined, out);
          }
          break;
        }
        case 'line': {
          if (e.path[0] !== this.#argsKey) break;
          this.#emitArgs(text.slice(argsFrom, at), out);
          argsFrom = at;
          this.#emitPiece({ kind: 'line', text: e.text, lineNo: e.lineNo }, e.path[1] as string, out);
          break;
        }
        case 'done': {
          const kind = this.#shape.strict ? 'not-call' : 'malformed';
          if (this.#name === undefined) return this.#fail(kind, 'no "name"', at);
          if (this.#args === undefined && this.#argsText !== undefined) {
            const failed = this.#decodeArgsText(this.#argsText, out);
            if (failed !== undefined) return this.#fail('malformed', failed, at);
          }
          if (this.#args === undefined) {
            if (!this.#shape.argsOptional) return this.#fail(kind, `no "${this.#shape.argsKeys.join('" or "')}"`, at);
            this.#args = {};
            this.#emitArgs('{}', out);
          }
          this.#status = 'complete';
          this.#update();
          break;
        }
        case 'error':
          // Argument text up to the bad character goes out, however the text was split.
          if (this.#argsOpen) this.#emitArgs(text.slice(argsFrom, at), out);
          return this.#fail('malformed', `malformed JSON: ${e.reason}`, at);
        default:
          break;
      }
    }
    if (this.#argsOpen) this.#emitArgs(text.slice(argsFrom, stop), out);
    return stop;
  }

  /** The input has ended inside the object. */
  end(): void {
    if (this.#status !== 'pending') return;
    this.#scanner.end();
    this.#fail('malformed', 'truncated call', 0);
  }

  /**
   * The arguments string's JSON object, through the same scanner as streamed arguments (so its
   * pieces and lines are those the object itself would give); the reason it is not one, if not.
   */
  #decodeArgsText(json: string, out: EventList): string | undefined {
    const callId = this.#callId;
    if (callId === undefined) return undefined;
    const args = new JsonArguments(callId, { lineField: this.#lineField, maxFieldDepth: this.#registry.maxFieldDepth });
    const start = json.length - json.trimStart().length;
    const stop = args.write(json, start, json.length, out);
    if (args.status !== 'complete' || json.slice(stop).trim() !== '') return `"${this.#argsKey}" is a string that does not hold one JSON object`;
    this.#args = args.args;
    return undefined;
  }

  /** Emits call-start once the call is certain; false if the name is refused (then failed). */
  #maybeStart(out: EventList): boolean {
    if (this.#callId !== undefined || this.#name === undefined) return true;
    if (this.#shape.startWhen === 'name-and-args' && this.#argsKey === undefined) return true;
    const rejection = this.#registry.rejection(this.#name);
    if (rejection !== undefined) {
      this.#fail('rejected', rejection, 0);
      return false;
    }
    const callId = this.#registry.nextCallId();
    this.#callId = callId;
    this.#update();
    this.#lineField = this.#registry.lineField(this.#name);
    out.push({ type: 'call-start', callId, name: this.#name });
    for (const item of this.#queue) {
      if ('args' in item) this.#emitArgs(item.args, out);
      else this.#emitPiece(item.piece, item.lineField, out);
    }
    this.#queue = [];
    return true;
  }

  #emitArgs(text: string, out: EventList): void {
    if (text.length === 0) return;
    if (this.#callId === undefined) this.#queue.push({ args: text });
    else out.args(this.#callId, text);
  }

  #emitPiece(piece: Piece, lineField: string | undefined, out: EventList): void {
    if (this.#callId === undefined) this.#queue.push({ piece, lineField });
    else if (piece.kind !== 'line' || lineField === this.#lineField) out.push({ type: 'call-piece', callId: this.#callId, piece });
  }

  #update(): void {
    this.#plainId = this.#status !== 'pending' ? undefined : this.#argsOpen ? (this.#callId ?? '') : '';
  }

  #fail(kind: CallObjectFailure['kind'], reason: string, at: number): number {
    this.#status = 'failed';
    this.#plainId = undefined;
    this.#failure = { kind, reason };
    this.#queue = [];
    return at;
  }
}
