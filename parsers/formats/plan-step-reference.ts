/**
 * What counts as a reference to an earlier step's result in an LLMCompiler plan step: `$1`,
 * `${1}`, and `${1`, a `${1}` whose closing brace the model left out. The parser orders steps by
 * these (planStepDependencies) and the plan executor substitutes them, so both read this one
 * definition: the parser's `\$\{?(\d+)\}?` once made `${1` wait for step 1 while the executor's
 * `\$\{(\d+)\}|\$(\d+)` left it in the argument as written, and a stray `}` after a bare `$1`
 * (`{$1}`) is no part of the reference: it stays, as the text around it does.
 */
const SOURCE = String.raw`\$(?:\{(\d+)\}?|(\d+))`;

/** One reference in a text: the step it names, and the characters it spans there. */
export interface StepReference {
  step: number;
  /** As written: `$1`, `${1}` or `${1`. */
  text: string;
  start: number;
}

/** Every reference in `text`, left to right, whatever step it names (the caller decides which are steps). */
export function* stepReferences(text: string): Generator<StepReference> {
  for (const match of text.matchAll(new RegExp(SOURCE, 'g'))) yield referenceOf(match);
}

/** The reference that starts at `index` of `text`, if one does. */
export function stepReferenceAt(text: string, index: number): StepReference | undefined {
  const sticky = new RegExp(SOURCE, 'y');
  sticky.lastIndex = index;
  const match = sticky.exec(text);
  return match === null ? undefined : referenceOf(match);
}

/** `text` with each reference replaced by what `replace` returns for it (its own text to keep it). */
export function replaceStepReferences(text: string, replace: (reference: StepReference) => string): string {
  let out = '';
  let from = 0;
  for (const reference of stepReferences(text)) {
    out += text.slice(from, reference.start) + replace(reference);
    from = reference.start + reference.text.length;
  }
  return from === 0 ? text : out + text.slice(from);
}

function referenceOf(match: RegExpExecArray | RegExpMatchArray): StepReference {
  return { step: Number(match[1] ?? match[2]), text: match[0], start: match.index! };
}
