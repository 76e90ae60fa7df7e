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
