import { isName } from './qwen3-function-opener.ts';

/** What a Qwen3TagName made of the text given to it. */
export type TagNameRead =
  /** All of the text is the name's so far: its `>` is still to come. */
  | { kind: 'more' }
  /** No name (whitespace or `<` in it, or none at all): the tag holds the text's first `at` characters, and `name` is what it read. */
  | { kind: 'invalid'; name: string; at: number }
  /** The name, closed by the `>` at `close`. */
  | { kind: 'name'; name: string; close: number };

/** The name in `<function=name>` or `<parameter=name>`, read across deltas up to the tag's `>`. */
export class Qwen3TagName {
  #name = '';

  read(input: string): TagNameRead {
    const close = input.indexOf('>');
    const part = close === -1 ? input : input.slice(0, close);
    // The name so far was checked with its delta: only the new part is (again and again, a long
    // name cost time quadratic in its length).
    if (!isName(part) || (close === 0 && this.#name === '')) {
      const bad = part.search(/[\s<]/);
      const at = bad === -1 ? close : bad;
      const name = this.#name + input.slice(0, at);
      this.#name = '';
      return { kind: 'invalid', name, at };
    }
    this.#name += part;
    if (close === -1) return { kind: 'more' };
    const name = this.#name;
    this.#name = '';
    return { kind: 'name', name, close };
  }

  /** Drops a name half read. */
  reset(): void {
    this.#name = '';
  }
}
