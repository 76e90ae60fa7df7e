import type { EventOutput } from './event-output.ts';
import { setOwn } from './python-value-parser.ts';
import { convertParameter } from './schema-typed-value.ts';
import { XmlParameterValue } from './xml-parameter-value.ts';

/**
 * A Qwen3-Coder call being read, and the events it owes as its parameters close: `call-start`
 * when it is made; per parameter a `field` piece {path: [name], value} and a `call-args`
 * fragment — JSON built one parameter at a time, `{"p":value` then `,"q":value`, and `}` (or
 * `{}`) at `end()`, since the model's text is not JSON — with the value converted to its schema
 * type (convertParameter); `line` pieces of its code parameter (the tool's `lineFields` entry),
 * numbered across the call; and
 * `call-end` with the arguments object, whose fragments it stringifies to.
 */
export class Qwen3CoderCall {
  readonly callId: string;
  readonly name: string;
  readonly args: Record<string, unknown> = {};
  readonly #out: EventOutput;
  /** The tool's parameter types from the request (none: every value stays text). */
  readonly #types: ReadonlyMap<string, string[]> | undefined;
  /** The parameter whose value is code, streamed as lines. */
  readonly #lineField: string | undefined;
  #params = 0;
  #lineNo = 0;

  constructor(callId: string, name: string, types: ReadonlyMap<string, string[]> | undefined, lineFields: Record<string, string>, out: EventOutput) {
    this.callId = callId;
    this.name = name;
    this.#types = types;
    this.#lineField = Object.hasOwn(lineFields, name) ? lineFields[name] : lineFields['*'];
    this.#out = out;
    out.event({ type: 'call-start', callId, name });
  }

  /** The tool's parameters in the request's schema (types by name); undefined when it names none. */
  get schema(): ReadonlyMap<string, string[]> | undefined {
    return this.#types !== undefined && this.#types.size > 0 ? this.#types : undefined;
  }

  /** Whether the call already has this parameter. */
  has(parameter: string): boolean {
    return Object.hasOwn(this.args, parameter);
  }

  /** `<parameter=name>` has been read: its value, streaming lines if it is the code parameter. */
  openParameter(name: string): XmlParameterValue {
    return new XmlParameterValue(name, name === this.#lineField);
  }

  /** A completed line of the code parameter. */
  line(text: string): void {
    this.#lineNo += 1;
    this.#out.event({ type: 'call-piece', callId: this.callId, piece: { kind: 'line', text, lineNo: this.#lineNo } });
  }

  /** The parameter's end marker has been read: its last line, then its field and its `call-args`. */
  closeParameter(parameter: XmlParameterValue): void {
    const { value: raw, lastLine } = parameter.close();
    if (lastLine !== undefined) this.line(lastLine);
    const { value, json } = convertParameter(raw, this.#types?.get(parameter.name));
    setOwn(this.args, parameter.name, value);
    this.#out.event({ type: 'call-piece', callId: this.callId, piece: { kind: 'field', path: [parameter.name], value } });
    this.#out.event({ type: 'call-args', callId: this.callId, text: `${this.#params === 0 ? '{' : ','}${JSON.stringify(parameter.name)}:${json}` });
    this.#params += 1;
  }

  /** `</function>` (or `</tool_call>`): the closing `call-args` and `call-end`. */
  end(): void {
    this.#out.event({ type: 'call-args', callId: this.callId, text: this.#params === 0 ? '{}' : '}' });
    this.#out.event({ type: 'call-end', callId: this.callId, args: this.args });
  }
}
