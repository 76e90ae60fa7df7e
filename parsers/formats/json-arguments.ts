import { IncrementalJsonScanner } from '../json/incremental-json-scanner.ts';
import type { EventList } from './event-list.ts';

/**
 * The arguments object of a call whose name is already known (DeepSeek, Functionary, harmony,
 * Mistral `[ARGS]`, OpenAI deltas), streamed as the model writes it: `call-args` carries the raw
 * text exactly, and each `call-piece` sits right after the character that completed it, so the
 * events are the same under any split.
 */
export class JsonArguments {
  readonly callId: string;
  readonly #scanner: IncrementalJsonScanner;
  #started = false;
  #status: 'pending' | 'complete' | 'failed' = 'pending';
  #failure = '';
  #args: Record<string, unknown> = {};

  constructor(callId: string, options: { lineField: string | undefined; maxFieldDepth: number }) {
    this.callId = callId;
    this.#scanner = new IncrementalJsonScanner({
      maxFieldDepth: options.maxFieldDepth,
      linePaths: options.lineField === undefined ? [] : [[options.lineField]],
      // A repeated key would give a second piece for a path a plugin already acted on (a second
      // program for a code field): the call is malformed, as in pythonic (parsers/README.md).
      uniqueKeysUnder: [[]],
    });
  }

  /** Whether the object has begun (its "{" was written). */
  get started(): boolean {
    return this.#started;
  }

  get status(): 'pending' | 'complete' | 'failed' {
    return this.#status;
  }

  get failure(): string {
    return this.#failure;
  }

  get args(): Record<string, unknown> {
    return this.#args;
  }

  /**
   * Scans `text[from, to)`, the first character of which (on the first call) must open the
   * object; returns where it stopped: `to`, just after the closing brace, or at the first
   * impossible character.
   */
  write(text: string, from: number, to: number, out: EventList): number {
    if (this.#status !== 'pending' || from >= to) return from;
    if (!this.#started) {
      this.#started = true;
      if (text.charCodeAt(from) !== 123) {
        this.#fail('arguments must be a JSON object');
        return from;
      }
    }
    const base = this.#scanner.offset - from;
    const stop = this.#scanner.write(text, from, to);
    // Most writes (inside a long string) produce no scanner events, only argument text: this
    // method stays small for them (V8 inlines it), and the rest is #handleEvents.
    if (this.#scanner.hasEvents) return this.#handleEvents(text, from, stop, base, out);
    out.args(this.callId, from === 0 && stop === text.length ? text : text.slice(from, stop));
    return stop;
  }

  /**
   * All of `text`, if it stays inside a string (see IncrementalJsonScanner.writePlain): returns
   * the call's id if `text` is just its next `call-args` fragment, '' if its events (line pieces
   * and the argument text around them) went to `out`. undefined if nothing was consumed.
   */
  writePlain(text: string, out: EventList): string | undefined {
    const scanner = this.#scanner;
    if (this.#status !== 'pending' || !scanner.writePlain(text)) return undefined;
    if (!scanner.hasEvents) return this.callId;
    this.#handleEvents(text, 0, text.length, scanner.offset - text.length, out);
    return '';
  }

  #handleEvents(text: string, from: number, stop: number, base: number, out: EventList): number {
    let emitted = from;
    const events = this.#scanner.takeScanEvents();
    for (let k = 0; k < events.length; k++) {
      const e = events[k]!;
      const at = e.at - base;
      if (e.type === 'field' || e.type === 'line') {
        out.args(this.callId, text.slice(emitted, at));
        emitted = at;
        out.push({
          type: 'call-piece',
          callId: this.callId,
          piece: e.type === 'field' ? { kind: 'field', path: e.path, value: e.value } : { kind: 'line', text: e.text, lineNo: e.lineNo },
        });
      } else if (e.type === 'done') {
        this.#status = 'complete';
        this.#args = e.value as Record<string, unknown>;
      } else if (e.type === 'error') {
        this.#fail(`malformed arguments: ${e.reason}`);
      }
    }
    out.args(this.callId, text.slice(emitted, stop));
    return stop;
  }

  /** The input has ended before the closing brace: the call is truncated. */
  end(): void {
    if (this.#status !== 'pending') return;
    if (!this.#started) this.#fail('truncated: no arguments');
    else {
      this.#scanner.end();
      this.#fail('truncated arguments');
    }
  }

  #fail(reason: string): void {
    this.#status = 'failed';
    this.#failure = reason;
  }
}
