import type { EventOutput } from './event-output.ts';
import { PythonSyntaxError, type PythonToken } from './python-literal-lexer.ts';
import { PythonValueParser, setOwn } from './python-value-parser.ts';

/**
 * What a token did that the parser keeps track of: began a call (its name), ended a call (its
 * `)`), closed the list (its `]`), or nothing of the kind.
 */
export type ListStep = 'more' | 'call-name' | 'call-end' | 'list-end';

type State = 'open' | 'call-name' | 'call-paren' | 'arg-name' | 'arg-eq' | 'arg-value' | 'after-call';

interface OpenCall {
  callId: string;
  args: Record<string, unknown>;
  argNames: Set<string>;
}

/**
 * The grammar of a pythonic call list, `[name(kw=literal, …), …]`, from its `[`, one token at a
 * time. It emits each call's events: `call-start` at the call's `(`; per keyword argument, at the
 * `,` or `)` that ends its value (only then is the value certain: "a" "b" is one string in
 * Python), a `field` piece and a `call-args` fragment of JSON as json.dumps writes it
 * (PythonValueParser.json); `call-end` at the call's `)`. The first token that cannot belong to
 * the list is a PythonSyntaxError.
 */
export class PythonicListGrammar {
  readonly #out: EventOutput;
  readonly #newCallId: () => string;
  #state: State = 'open';
  #call: OpenCall | undefined;
  #callName = '';
  #argName = '';
  #value: PythonValueParser | undefined;
  /** Whether a `]` may close the list now (after a call, or a comma after one). */
  #canClose = false;

  constructor(out: EventOutput, newCallId: () => string) {
    this.#out = out;
    this.#newCallId = newCallId;
  }

  /** The id of the call whose arguments are being read (from its `(` to its `)`). */
  get openCallId(): string | undefined {
    return this.#call?.callId;
  }

  /**
   * The open call was found malformed, and the parser reads on to its `)` (PythonCallSkipper):
   * what comes after that is read as after any call.
   */
  dropCall(): void {
    this.#call = undefined;
    this.#value = undefined;
    this.#state = 'after-call';
    this.#canClose = true;
  }

  token(token: PythonToken): ListStep {
    switch (this.#state) {
      case 'open':
        this.#state = 'call-name';
        return 'more';
      case 'call-name':
        if (token.kind === 'name') {
          this.#callName = token.value;
          this.#state = 'call-paren';
          return 'call-name';
        }
        if (isPunct(token, ']') && this.#canClose) return 'list-end';
        throw new PythonSyntaxError('expected the name of a function to call');
      case 'call-paren': {
        if (!isPunct(token, '(')) throw new PythonSyntaxError(`expected '(' after ${this.#callName}`);
        const callId = this.#newCallId();
        this.#call = { callId, args: {}, argNames: new Set() };
        this.#out.event({ type: 'call-start', callId, name: this.#callName });
        this.#state = 'arg-name';
        return 'more';
      }
      case 'arg-name':
        if (token.kind === 'name') {
          if (this.#call!.argNames.has(token.value)) throw new PythonSyntaxError(`keyword argument repeated: ${token.value}`);
          this.#argName = token.value;
          this.#state = 'arg-eq';
          return 'more';
        }
        if (isPunct(token, ')')) return this.#endCall();
        throw new PythonSyntaxError('tool calls take keyword arguments only');
      case 'arg-eq':
        if (!isPunct(token, '=')) throw new PythonSyntaxError(`expected '=' after the argument name ${this.#argName}`);
        this.#value = new PythonValueParser();
        this.#state = 'arg-value';
        return 'more';
      case 'arg-value':
        if (this.#value!.offer(token)) return 'more';
        this.#argument(this.#value!.value, this.#value!.json);
        if (isPunct(token, ',')) {
          this.#state = 'arg-name';
          return 'more';
        }
        if (isPunct(token, ')')) return this.#endCall();
        throw new PythonSyntaxError(`expected ',' or ')' after the value of ${this.#argName}`);
      case 'after-call':
        if (isPunct(token, ',')) {
          this.#state = 'call-name';
          return 'more';
        }
        if (isPunct(token, ']')) return 'list-end';
        throw new PythonSyntaxError("expected ',' or ']' after a call");
    }
  }

  #argument(value: unknown, json: string): void {
    const call = this.#call!;
    const name = this.#argName;
    const first = call.argNames.size === 0;
    call.argNames.add(name);
    setOwn(call.args, name, value);
    this.#value = undefined;
    this.#out.event({ type: 'call-piece', callId: call.callId, piece: { kind: 'field', path: [name], value } });
    this.#out.event({ type: 'call-args', callId: call.callId, text: `${first ? '{' : ','}${JSON.stringify(name)}:${json}` });
  }

  #endCall(): ListStep {
    const call = this.#call!;
    this.#out.event({ type: 'call-args', callId: call.callId, text: call.argNames.size === 0 ? '{}' : '}' });
    this.#out.event({ type: 'call-end', callId: call.callId, args: call.args });
    this.#call = undefined;
    this.#state = 'after-call';
    this.#canClose = true;
    return 'call-end';
  }
}

function isPunct(token: PythonToken, value: string): boolean {
  return token.kind === 'punct' && token.value === value;
}
