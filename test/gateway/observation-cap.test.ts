import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capObservation } from '../../gateway/observation-cap.ts';

describe('capObservation', () => {
  it('leaves content within the limit as it is, the same object', () => {
    const result = { ok: true, content: 'x'.repeat(100), data: { rows: 1 } };
    expect(capObservation(result, 100)).toBe(result);
  });

  it('keeps the start and the end of longer content, says how much went, and stays within the limit', () => {
    const content = `first line\n${'.'.repeat(10_000)}\nTraceback: ZeroDivisionError`;
    const capped = capObservation({ ok: false, content, data: { error: 'x' } }, 400);
    expect(capped.content.length).toBeLessThanOrEqual(400);
    expect(capped.content.startsWith('first line\n')).toBe(true);
    expect(capped.content.endsWith('Traceback: ZeroDivisionError')).toBe(true);
    // The count is what went: the kept start and end and the count add up to the whole.
    const count = Number(/\[… ([\d,]+) characters of this output cut …\]/.exec(capped.content)![1]!.replace(/,/g, ''));
    const note = `\n[… ${count.toLocaleString('en-US')} characters of this output cut …]\n`;
    expect(capped.content.length - note.length + count).toBe(content.length);
    // What the client gets beside it is untouched.
    expect(capped).toMatchObject({ ok: false, data: { error: 'x' } });
  });

  it('never splits a surrogate pair, and always fits the limit', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.integer({ min: 80, max: 300 }), (content, max) => {
        const capped = capObservation({ ok: true, content }, max).content;
        expect(capped.length).toBeLessThanOrEqual(Math.max(max, content.length <= max ? content.length : 0));
        // No lone half of a surrogate pair.
        expect(capped).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      }),
    );
  });
});
