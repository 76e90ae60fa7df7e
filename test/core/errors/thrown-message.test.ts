import { expect, it } from 'vitest';
import { MAX_THROWN_MESSAGE, thrownMessage } from '../../../core/errors/tool-errors.ts';

// thrownMessage is what a tool error quotes of a plugin's throw, in every runtime.

it('cuts a long message, saying how long it was', () => {
  const message = thrownMessage(new TypeError('y'.repeat(50_000)));
  expect(message.startsWith('TypeError: yyy')).toBe(true);
  expect(message).toMatch(new RegExp(` \\[…; the message was 50011 characters, cut at ${MAX_THROWN_MESSAGE}\\]$`));
  expect(thrownMessage('z'.repeat(20_000))).toMatch(/^z+ \[…; the message was 20000 characters, cut at 10000\]$/);
  expect(thrownMessage(new Error('short'))).toBe('short');
});

it('reads a thrown object that contains itself as JSON, the cycle marked, not [object Object]', () => {
  const thrown: Record<string, unknown> = { code: 42, detail: 'no such row' };
  thrown['self'] = thrown;
  expect(thrownMessage(thrown)).toBe('{"code":42,"detail":"no such row","self":"[Circular]"}');
  // The same object twice, not inside itself, is no cycle.
  const shared = { id: 1 };
  expect(thrownMessage({ a: shared, b: shared, n: 10n })).toBe('{"a":{"id":1},"b":{"id":1},"n":"10n"}');
});

// A thrown object's JSON was cut at 500 characters with a bare '…', a second limit beside
// MAX_THROWN_MESSAGE that said nothing of what was lost: `{ code, detail }` with a long detail
// lost its end (often the field that says what failed) at 500.
it('cuts a thrown object\'s JSON where a message is cut, saying so', () => {
  const detail = 'd'.repeat(2_000);
  expect(thrownMessage({ code: 42, detail, hint: 'retry' })).toBe(`{"code":42,"detail":"${detail}","hint":"retry"}`);
  const long = thrownMessage({ detail: 'e'.repeat(20_000) });
  expect(long.startsWith('{"detail":"eee')).toBe(true);
  expect(long).toMatch(new RegExp(` \\[…; the message was 20013 characters, cut at ${MAX_THROWN_MESSAGE}\\]$`));
});

// A cut between the two halves of a surrogate pair left a lone surrogate in the error text, which
// the next round sends upstream, where a UTF-8 encoder (a Python server's tokenizer) refuses it.
it('never cuts a message inside a surrogate pair', () => {
  const message = thrownMessage(`${'a'.repeat(MAX_THROWN_MESSAGE - 1)}😀 and more`);
  expect(message).toBe(`${'a'.repeat(MAX_THROWN_MESSAGE - 1)} […; the message was ${MAX_THROWN_MESSAGE + 10} characters, cut at ${MAX_THROWN_MESSAGE}]`);
});
