import { describe, expect, it } from 'vitest';
import { PythonicHeldText } from '../../parsers/formats/pythonic-held-text.ts';

// `[f(x=foo), h(y=bar), g(z=1)]`: f and h are malformed (a name is no literal), g runs.
function dropBoth(held: PythonicHeldText): string[] {
  held.startList();
  held.drop('[', 'f(x=');
  held.skip('foo)');
  const first = held.dropClosed();
  held.drop(', ', 'h(y=');
  held.skip('bar)');
  return [first, held.dropClosed()];
}

describe('PythonicHeldText', () => {
  it('holds bad calls until one runs, then releases their own text with the separator between them, not the brackets', () => {
    const held = new PythonicHeldText();
    expect(dropBoth(held)).toEqual(['', '']);
    expect(held.callRan()).toBe('f(x=foo), h(y=bar)');
    expect(held.ran).toBe(true);
    // After a call ran, a bad call is released as it closes, after the separator the model wrote
    // before it, since bad calls' text is out already.
    held.drop(', ', 'k(a=');
    held.skip('b)');
    expect(held.dropClosed()).toBe(', k(a=b)');
    expect(held.callRan()).toBe('');
  });

  it('releases the first bad call after one that ran without the separator before it', () => {
    const held = new PythonicHeldText();
    held.startList();
    expect(held.callRan()).toBe('');
    held.drop(', ', 'k(a=');
    held.skip('b)');
    expect(held.dropClosed()).toBe('k(a=b)');
  });

  it('releases the list as written when none of its calls runs', () => {
    const held = new PythonicHeldText();
    dropBoth(held);
    expect(held.release()).toBe('[f(x=foo), h(y=bar)');
    expect(held.ran).toBe(false);
    expect(held.release()).toBe('');
  });

  it('gives a list that fails inside a bad call everything of that call read so far', () => {
    const held = new PythonicHeldText();
    held.startList();
    held.drop('[', 'f(x=');
    held.skip('foo');
    expect(held.skipped).toBe('[f(x=foo');
    expect(held.release()).toBe('');
    expect(held.skipped).toBe('');
  });
});
