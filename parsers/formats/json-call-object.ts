import { IncrementalJsonScanner, type JsonPath } from '../json/incremental-json-scanner.ts';
import type { ValueKind } from '../json/json-scan-event.ts';
import type { CallRegistry } from './call-options.ts';
import type { EventList } from './event-list.ts';
import type { CallObjectFailure, CallObjectShape } from './call-object-shape.ts';
import { scannerOptions } from './call-object-scanner-options.ts';
import { CallStartQueue } from './call-start-queue.ts';
import { decodeStringHeldArguments, holdsJsonObject } from './string-held-arguments.ts';

export type { CallObjectFailure, CallObjectShape } from './call-object-shape.ts';

/**
 * One `{"name": …, "arguments": {…}}` object (hermes, Mistral, Llama JSON; with the shape's
 * `wrapperKey`, also inside `{"function": …}`), scanned once as it streams. Keys may come in any
 * order: until the name is known, the arguments' raw text and pieces are queued (CallStartQueue), then
 * released in order right after call-start, so where each event lands depends only on the text, never on the split.
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
  readonly #events = new CallStartQueue();
  /**
   * What writePlain returns for plain text: the call's id while it is argument text of a started
   * call, '' otherwise (queued, or not argument text), undefined once the object is not pending.
   * Kept up to date at each change (#update) so that the per-token path reads one field.
   */
  #plainId: string | undefined = '';
  /** Where the call object's keys are in a path: 0, or 1 inside the shape's wrapper key. */
  #level = 0;

  constructor(registry: CallRegistry, shape: CallObjectShape) {
    this.#registry = registry;
    this.#shape = shape;
    this.#scanner = new IncrementalJsonScanner(scannerOptions(registry, shape));
  }

  get status(): 'pending' | 'complete' | 'failed' {
    return this.#status;
  }

  get failure(): CallObjectFailure | undefined {
    return this.#failure;
  }

  /** Set once call-start has been emitted. */
  get callId(): string | undefined {
    return this.#events.callId;
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
    if (this.#argsOpen) this.#events.args(from === 0 && stop === text.length ? text : text.slice(from, stop), out);
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
    if (plainId === '' && this.#argsOpen) this.#events.args(text, out);
    return plainId;
  }

  #handleEvents(text: string, from: number, stop: number, base: number, out: EventList): number {
    let argsFrom = from;
    const shape = this.#shape;
    const events = this.#scanner.takeScanEvents();
    for (let k = 0; k < events.length; k++) {
      const e = events[k]!;
      const at = e.at - base;
      const level = this.#level;
      // Wrapped, only what is inside the wrapper key's object is the call's.
      if (level === 1 && e.type !== 'key' && e.type !== 'done' && e.type !== 'error' && e.path[0] !== shape.wrapperKey) continue;
      switch (e.type) {
        // Keys and openings are few (the call object's own); kept out of this loop, which
        // every field and line of the arguments goes through (bench/parsers: 10% on llama3-json).
        case 'key':
          if (!this.#onKey(e.path, at)) return at;
          break;
        case 'open': {
          const opened = this.#onOpen(e.path, e.kind!, at, out);
          if (opened === undefined) return at;
          if (opened) argsFrom = at;
          break;
        }
        case 'field': {
          const key = e.path[level];
          if (e.path.length === level) {
            // The wrapper key's object has closed: the call's keys are all there.
            if (!this.#closeCall(at, out)) return at;
          } else if (e.path.length === level + 1) {
            if (key === 'name') {
              if (typeof e.value !== 'string') return this.#fail(shape.strict ? 'not-call' : 'malformed', '"name" must be a string', at);
              this.#name = e.value;
              if (!this.#maybeStart(out) || !this.#decodeHeldArgs(at, out)) return at;
            } else if (key === this.#argsKey && typeof e.value === 'string') {
              this.#argsText = e.value;
              // Where call-start waits for the arguments (Llama JSON, no marker), the string is
              // them once it holds an object; one that does not keeps the object prose.
              if (this.#events.callId === undefined && shape.startWhen === 'name-and-args') {
                if (!holdsJsonObject(e.value)) return this.#fail('not-call', `"${key}" must be a JSON object`, at);
                if (!this.#maybeStart(out)) return at;
              }
              if (!this.#decodeHeldArgs(at, out)) return at;
            } else if (key === this.#argsKey) {
              this.#events.args(text.slice(argsFrom, at), out);
              this.#argsOpen = false;
              this.#update();
              this.#args = e.value as Record<string, unknown>;
            }
          } else if (key === this.#argsKey) {
            this.#events.args(text.slice(argsFrom, at), out);
            argsFrom = at;
            this.#events.piece({ kind: 'field', path: e.path.slice(level + 1), value: e.value }, undefined, out);
          }
          break;
        }
        case 'line': {
          if (e.path[level] !== this.#argsKey) break;
          this.#events.args(text.slice(argsFrom, at), out);
          argsFrom = at;
          this.#events.piece({ kind: 'line', text: e.text, lineNo: e.lineNo }, e.path[level + 1] as string, out);
          break;
        }
        case 'done': {
          if (level === 0 && !this.#closeCall(at, out)) return at;
          this.#status = 'complete';
          this.#update();
          break;
        }
        case 'error':
          // Argument text up to the bad character goes out, however the text was split.
          if (this.#argsOpen) this.#events.args(text.slice(argsFrom, at), out);
          return this.#fail('malformed', `malformed JSON: ${e.reason}`, at);
        default:
          break;
      }
    }
    if (this.#argsOpen) this.#events.args(text.slice(argsFrom, stop), out);
    return stop;
  }

  /** A key of the call object (or its wrapper) has closed: false (and failed) if the object cannot be a call. */
  #onKey(path: JsonPath, at: number): boolean {
    const shape = this.#shape;
    const level = this.#level;
    const depth = path.length - 1;
    if (depth > level) return true;
    const key = path[depth] as string;
    const callKey = key === 'name' || shape.argsKeys.includes(key);
    if (depth < level) {
      // The wrapper's own keys, after its call object: no second call there.
      return !(callKey || key === shape.wrapperKey) || this.#failed('malformed', `"${key}" outside "${shape.wrapperKey}"`, at);
    }
    if (key === 'name' ? this.#name !== undefined : callKey && this.#argsKey !== undefined) return this.#failed('malformed', `duplicate "${key}"`, at);
    if (callKey || this.#opensWrapper(key, depth)) return true;
    if (shape.strict && !shape.extraKeys?.includes(key) && !(shape.ignoreKeysOnceStarted && this.#events.callId !== undefined)) {
      return this.#failed('not-call', `unexpected key "${key}"`, at);
    }
    return true;
  }

  /** A value of the call object opens: true when it is the arguments object, false for another, undefined when the call failed. */
  #onOpen(path: JsonPath, kind: ValueKind, at: number, out: EventList): boolean | undefined {
    const shape = this.#shape;
    const level = this.#level;
    const key = path[level];
    if (path.length !== level + 1 || typeof key !== 'string') return false;
    if (this.#opensWrapper(key, level)) {
      if (kind !== 'object') return this.#notObject(key, at);
      this.#level = 1;
      return false;
    }
    if (!shape.argsKeys.includes(key)) return false;
    if (kind === 'string' && shape.argsMayBeString) {
      this.#argsKey = key;
      return false;
    }
    if (kind !== 'object') return this.#notObject(key, at);
    this.#argsKey = key;
    this.#argsOpen = true;
    this.#update();
    return this.#maybeStart(out) ? true : undefined;
  }

  #notObject(key: string, at: number): undefined {
    this.#fail(this.#shape.strict ? 'not-call' : 'malformed', `"${key}" must be a JSON object`, at);
    return undefined;
  }

  /** Whether `key`, at `depth`, is the wrapper key opening the call object: no key of the call came before it. */
  #opensWrapper(key: string, depth: number): boolean {
    return depth === 0 && this.#level === 0 && key === this.#shape.wrapperKey && this.#name === undefined && this.#argsKey === undefined;
  }

  /** The call object has closed: false (and failed) if it is not a whole call. */
  #closeCall(at: number, out: EventList): boolean {
    const kind = this.#shape.strict ? 'not-call' : 'malformed';
    if (this.#name === undefined) return this.#failed(kind, 'no "name"', at);
    if (this.#args === undefined) {
      if (!this.#shape.argsOptional) return this.#failed(kind, `no "${this.#shape.argsKeys.join('" or "')}"`, at);
      this.#args = {};
      this.#events.args('{}', out);
    }
    return true;
  }

  /** The input has ended inside the object. */
  end(): void {
    if (this.#status !== 'pending') return;
    this.#scanner.end();
    this.#fail('malformed', 'truncated call', 0);
  }

  /**
   * Decodes arguments written as a string once both it and call-start are there (at its closing
   * quote, or at the name's if that comes after), not at the object's close: the tool can start as
   * soon as its arguments are whole. False (and failed) if the string holds no JSON object.
   */
  #decodeHeldArgs(at: number, out: EventList): boolean {
    if (this.#argsText === undefined || this.#args !== undefined || this.#events.callId === undefined) return true;
    const decoded = decodeStringHeldArguments(this.#argsText, this.#argsKey ?? '', this.#events.callId, { lineField: this.#events.lineField, maxFieldDepth: this.#registry.maxFieldDepth }, out);
    if ('failure' in decoded) return this.#failed('malformed', decoded.failure, at);
    this.#args = decoded.args;
    return true;
  }

  /** Emits call-start once the call is certain; false if the name is refused (then failed). */
  #maybeStart(out: EventList): boolean {
    if (this.#events.callId !== undefined || this.#name === undefined) return true;
    if (this.#shape.startWhen === 'name-and-args' && this.#argsKey === undefined) return true;
    const rejection = this.#registry.rejection(this.#name);
    if (rejection !== undefined) {
      this.#fail('rejected', rejection, 0);
      return false;
    }
    this.#events.start(this.#registry.nextCallId(), this.#name, this.#registry.lineField(this.#name), out);
    this.#update();
    return true;
  }

  #update(): void {
    this.#plainId = this.#status !== 'pending' ? undefined : this.#argsOpen ? (this.#events.callId ?? '') : '';
  }

  #failed(kind: CallObjectFailure['kind'], reason: string, at: number): false {
    this.#fail(kind, reason, at);
    return false;
  }

  #fail(kind: CallObjectFailure['kind'], reason: string, at: number): number {
    this.#status = 'failed';
    this.#plainId = undefined;
    this.#failure = { kind, reason };
    this.#events.clear();
    return at;
  }
}
