import { describe, expect, it } from 'vitest';
import { planStepDependencies } from '../../parsers/formats/llmcompiler-plan-parser.ts';
import { replaceStepReferences, stepReferenceAt, stepReferences } from '../../parsers/formats/plan-step-reference.ts';

describe('plan step references', () => {
  it('reads $n, ${n} and ${n (brace missing), and no brace after a bare $n', () => {
    expect([...stepReferences('$1 ${2} ${3 {$4} $ ${ x$56')]).toEqual([
      { step: 1, text: '$1', start: 0 },
      { step: 2, text: '${2}', start: 3 },
      { step: 3, text: '${3', start: 8 },
      { step: 4, text: '$4', start: 13 },
      { step: 56, text: '$56', start: 23 },
    ]);
    expect(stepReferenceAt('a ${7b', 2)).toEqual({ step: 7, text: '${7', start: 2 });
    expect(stepReferenceAt('a ${7b', 1)).toBeUndefined();
  });

  it('replaces each reference once, keeping what the callback keeps', () => {
    expect(replaceStepReferences('${1 and {$2} and ${9}', (r) => (r.step === 9 ? r.text : `<${r.step}>`))).toBe('<1> and {<2>} and ${9}');
    expect(replaceStepReferences('no references', () => 'x')).toBe('no references');
  });

  // Review s40: `${1` made a step wait for step 1 here, while the executor left it unsubstituted.
  it('makes a step wait for the steps the executor substitutes', () => {
    const step = (raw: string) => ({ kind: 'step' as const, index: 3, tool: 'f', args: [], raw });
    expect(planStepDependencies(step('3. f("${1 then $2}")'))).toEqual([1, 2]);
    expect(planStepDependencies(step('3. f("${3 and $4 and ${0}")'))).toEqual([]);
  });
});
