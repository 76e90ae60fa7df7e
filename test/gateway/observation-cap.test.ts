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

  it('counts UTF-8 bytes too, which bound the tokens: CJK text, up to three tokens a character, keeps a third as many characters', () => {
    const content = `開始${'漢字'.repeat(5_000)}終了`;
    const capped = capObservation({ ok: true, content }, 400).content;
    expect(Buffer.byteLength(capped)).toBeLessThanOrEqual(400);
    expect(capped.length).toBeLessThan(200);
    expect(capped.startsWith('開始')).toBe(true);
    expect(capped.endsWith('終了')).toBe(true);
    const count = Number(/\[… ([\d,]+) characters of this output cut …\]/.exec(capped)![1]!.replace(/,/g, ''));
    const note = `\n[… ${count.toLocaleString('en-US')} characters of this output cut …]\n`;
    expect(capped.length - note.length + count).toBe(content.length);
    // Within the limit in characters but over it in bytes: cut as well.
    expect(Buffer.byteLength(capObservation({ ok: true, content: '字'.repeat(300) }, 400).content)).toBeLessThanOrEqual(400);
  });

  it('never splits a surrogate pair, and always fits the limit, in characters and in bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.integer({ min: 80, max: 300 }), (content, max) => {
        const capped = capObservation({ ok: true, content }, max).content;
        const within = content.length <= max && Buffer.byteLength(content) <= max;
        expect(capped.length).toBeLessThanOrEqual(Math.max(max, within ? content.length : 0));
        expect(Buffer.byteLength(capped)).toBeLessThanOrEqual(Math.max(max, within ? Buffer.byteLength(content) : 0));
        if (within) expect(capped).toBe(content);
        // No lone half of a surrogate pair.
        expect(capped).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      }),
    );
  });

  it('cut again shorter (to fit the context), keeps one note that counts all that went, the first cut included', () => {
    const content = `first line\n${Array.from({ length: 6_000 }, (_, i) => `line ${i}`).join('\n')}\nlast line`;
    const once = capObservation({ ok: true, content }, 20_000).content;
    // Shorter by a little (the note of the first cut straddled the second's) and by a lot.
    for (const max of [once.length - 10, 5_000, 300]) {
      const twice = capObservation({ ok: true, content: once }, max).content;
      expect(twice.length).toBeLessThanOrEqual(max);
      expect(twice.startsWith('first line\n')).toBe(true);
      expect(twice.endsWith('\nlast line')).toBe(true);
      const notes = [...twice.matchAll(/\n\[… ([\d,]+) characters of this output cut …\]\n/g)];
      expect(notes).toHaveLength(1);
      const count = Number(notes[0]![1]!.replace(/,/g, ''));
      // As one cut of the whole would say: what is kept and the count add up to the original.
      expect(twice.length - notes[0]![0].length + count).toBe(content.length);
    }
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 600 }), fc.integer({ min: 80, max: 400 }), fc.integer({ min: 80, max: 400 }), (text, first, second) => {
        const once = capObservation({ ok: true, content: text }, first).content;
        const twice = capObservation({ ok: true, content: once }, second).content;
        // Within the second limit, or left as the first cut left it when that already was.
        expect(Buffer.byteLength(twice)).toBeLessThanOrEqual(Math.max(second, Buffer.byteLength(once)));
        expect(twice).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      }),
    );
  });
});
