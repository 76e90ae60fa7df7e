import type { Qwen3CoderCall } from './qwen3-coder-call.ts';
import { Qwen3ValueEnd, type ValueStep } from './qwen3-value-end.ts';
import type { XmlParameterValue } from './xml-parameter-value.ts';

/**
 * A Qwen3-Coder parameter being read, from its `<parameter=name>` to the marker that ends it: the
 * value's lines go to the call as they complete, and the value itself once that marker is certain.
 */
export class Qwen3OpenParameter {
  readonly #call: Qwen3CoderCall;
  readonly #value: XmlParameterValue;
  /** Where #value ends: what holds back a marker inside it until what follows decides it. */
  readonly #valueEnd: Qwen3ValueEnd;

  constructor(name: string, call: Qwen3CoderCall) {
    this.#call = call;
    this.#value = call.openParameter(name);
    this.#valueEnd = new Qwen3ValueEnd(name, call);
  }

  /** Whether text is held, undecided: `push('', true)` settles it. */
  get holds(): boolean {
    return this.#valueEnd.holds;
  }

  /** More of the value's text; at its end marker the parameter is closed into the call. */
  push(input: string, final: boolean): ValueStep {
    const step = this.#valueEnd.push(input, final);
    for (const line of this.#value.append(step.text)) this.#call.line(line);
    if (step.kind === 'end') this.#call.closeParameter(this.#value);
    return step;
  }
}
