import type { CallRegistry } from './call-options.ts';
import type { EventList } from './event-list.ts';
import { skipWhitespace } from './format-parser.ts';
import { JsonArguments } from './json-arguments.ts';
import { RawCodeCall } from './raw-code-call.ts';

/**
 * The body of a message addressed to a tool (Functionary v2/v3, harmony): a JSON arguments
 * object, or — for a tool in `codeTools` whose body does not start with "{" — raw code. The
 * whitespace before it is frame. The owning format finds where the body ends (its end marker)
 * and passes JSON bodies through `writeJson`, raw code through `writeCode`.
 */
export class ToolBody {
  readonly callId: string;
  readonly #name: string;
  readonly #registry: CallRegistry;
  readonly #codeTools: readonly string[];
  #body: { kind: 'before' } | { kind: 'json'; args: JsonArguments } | { kind: 'code'; code: RawCodeCall } = { kind: 'before' };

  constructor(callId: string, name: string, registry: CallRegistry, codeTools: readonly string[]) {
    this.callId = callId;
    this.#name = name;
    this.#registry = registry;
    this.#codeTools = codeTools;
  }

  get kind(): 'before' | 'json' | 'code' {
    return this.#body.kind;
  }

  get json(): JsonArguments | undefined {
    return this.#body.kind === 'json' ? this.#body.args : undefined;
  }

  get code(): RawCodeCall | undefined {
    return this.#body.kind === 'code' ? this.#body.code : undefined;
  }

  /** Skips leading whitespace and decides the body's kind at its first character; returns the index reached. */
  begin(buf: string, i: number, out: EventList): number {
    const j = skipWhitespace(buf, i);
    if (j === buf.length) return j;
    if (buf[j] !== '{' && this.#codeTools.includes(this.#name)) {
      this.#body = { kind: 'code', code: new RawCodeCall(this.callId, this.#registry.lineField(this.#name) ?? 'code', out) };
    } else {
      this.#body = {
        kind: 'json',
        args: new JsonArguments(this.callId, { lineField: this.#registry.lineField(this.#name), maxFieldDepth: this.#registry.maxFieldDepth }),
      };
    }
    return j;
  }
}
