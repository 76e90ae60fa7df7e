type State = 'bracket' | 'open' | 'name' | 'after-name' | 'paren' | 'arg' | 'after-arg';

export type CandidateResult =
  /** Could still become a call list: everything stays held. */
  | { kind: 'more' }
  /** `text` (all of it, from the `[`) reads `[name(kw=` or `[name()`: it is a call list. */
  | { kind: 'accepted'; text: string }
  /** `text` (all of it, from the `[`) can no longer be a call list. */
  | { kind: 'rejected'; text: string };

/**
 * Decides whether a `[` in prose opens a pythonic call list, holding the text meanwhile. The
 * bar is `[name(` followed by `keyword=` or `)`, because `[f(x)]` or `[see(below)]` in prose
 * must stay prose while `[f(x=1)]` and `[f()]` cannot be anything but a call.
 */
export class PythonicCandidate {
  #state: State = 'bracket';
  #text = '';

  feed(input: string, final: boolean): CandidateResult {
    const start = this.#text.length;
    this.#text += input;
    for (let i = start; i < this.#text.length; i++) {
      const verdict = this.#char(this.#text[i]!);
      if (verdict !== undefined) return { kind: verdict, text: this.#text };
    }
    return final ? { kind: 'rejected', text: this.#text } : { kind: 'more' };
  }

  #char(c: string): 'accepted' | 'rejected' | undefined {
    const space = c === ' ' || c === '\t' || c === '\n' || c === '\r';
    switch (this.#state) {
      case 'bracket':
        this.#state = 'open';
        return c === '[' ? undefined : 'rejected';
      case 'open':
        if (space) return undefined;
        if (!isNameStart(c)) return 'rejected';
        this.#state = 'name';
        return undefined;
      case 'name':
      case 'after-name':
        if (this.#state === 'name' && isNameChar(c)) return undefined;
        if (space) {
          this.#state = 'after-name';
          return undefined;
        }
        if (c !== '(') return 'rejected';
        this.#state = 'paren';
        return undefined;
      case 'paren':
        if (space) return undefined;
        if (c === ')') return 'accepted';
        if (!isNameStart(c)) return 'rejected';
        this.#state = 'arg';
        return undefined;
      case 'arg':
      case 'after-arg':
        if (this.#state === 'arg' && isNameChar(c)) return undefined;
        if (space) {
          this.#state = 'after-arg';
          return undefined;
        }
        return c === '=' ? 'accepted' : 'rejected';
    }
  }
}

function isNameStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
}

function isNameChar(c: string): boolean {
  return isNameStart(c) || (c >= '0' && c <= '9');
}
