/**
 * How far a plan line has matched a step's head, `[ \t]*\d+\.[ \t]*name(` (the start of
 * llmcompiler-plan-parser's STEP_LINE), reading each character once: testing the whole line again
 * with every delta cost time quadratic in the line's length when a model wrote a long run of
 * spaces where a step could still begin.
 */
export class PlanStepHead {
  #state: 'indent' | 'index' | 'after-dot' | 'name' = 'indent';

  /**
   * Reads more of the line: `head` once the head is complete (the rest of the line is not read),
   * `text` once the line can no longer be a step, else `prefix`.
   */
  feed(text: string): 'head' | 'text' | 'prefix' {
    for (const c of text) {
      switch (this.#state) {
        case 'indent':
          if (c === ' ' || c === '\t') continue;
          if (!isDigit(c)) return 'text';
          this.#state = 'index';
          continue;
        case 'index':
          if (isDigit(c)) continue;
          if (c !== '.') return 'text';
          this.#state = 'after-dot';
          continue;
        case 'after-dot':
          if (c === ' ' || c === '\t') continue;
          if (!/[A-Za-z_]/.test(c)) return 'text';
          this.#state = 'name';
          continue;
        case 'name':
          if (c === '(') return 'head';
          if (!/\w/.test(c)) return 'text';
          continue;
      }
    }
    return 'prefix';
  }
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}
