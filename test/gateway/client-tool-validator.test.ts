import { describe, expect, it } from 'vitest';
import { ClientToolValidator } from '../../gateway/client-tool-validator.ts';
import type { Piece } from '../../parsers/parser-events.ts';

const field = (name: string, value: unknown): Piece => ({ kind: 'field', path: [name], value });

function validator(properties: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return new ClientToolValidator([{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties, ...extra } } }]);
}

describe('ClientToolValidator', () => {
  it('checks each top-level argument against its schema, worded as zod words it', () => {
    const v = validator({ city: { type: 'string' }, days: { type: 'integer', minimum: 1 } });
    expect(v.check('f', field('city', 'Paris'))).toBeUndefined();
    expect(v.check('f', field('days', 0))).toMatch(/^argument "days" of f: ✖ Too small/);
    expect(v.check('f', field('city', 5))).toMatch(/^argument "city" of f: ✖ Invalid input: expected string/);
    expect(v.check('other', field('city', 5))).toBeUndefined();
  });

  it('checks patterns in linear time: a catastrophic-backtracking regex on a long field answers at once', () => {
    // With RegExp this test never ends (2^60 steps): the gateway's event loop, and every other
    // request on it, would be held.
    const v = validator({ word: { type: 'string', pattern: '^(a+)+$' } });
    expect(v.check('f', field('word', `${'a'.repeat(60)}!`))).toBe('argument "word" of f: ✖ Invalid string: must match pattern /^(a+)+$/');
    expect(v.check('f', field('word', 'a'.repeat(60)))).toBeUndefined();
  });

  it('checks patterns nested under properties, items and allOf; leaves anyOf branches and what RE2 cannot read to the client', () => {
    const v = validator({
      address: { type: 'object', properties: { state: { type: 'string', pattern: '^[A-Z]{2}$' } } },
      tags: { type: 'array', items: { type: 'string', pattern: '^#' } },
      code: { allOf: [{ type: 'string' }, { pattern: '^[0-9]+$' }] },
      either: { anyOf: [{ type: 'string', pattern: '^x' }, { type: 'string', pattern: '^y' }] },
      lookahead: { type: 'string', pattern: '^(?=a)b' },
    });
    // Paths are inside the argument, as zod gives them for its own checks.
    expect(v.check('f', field('address', { state: 'Illinois' }))).toBe('argument "address" of f: ✖ Invalid string: must match pattern /^[A-Z]{2}$/   → at state');
    expect(v.check('f', field('address', { state: 'IL' }))).toBeUndefined();
    expect(v.check('f', field('tags', ['#a', 'b']))).toContain('→ at 1');
    expect(v.check('f', field('code', '12a'))).toContain('must match pattern /^[0-9]+$/');
    expect(v.check('f', field('code', '12'))).toBeUndefined();
    expect(v.check('f', field('either', 'zzz'))).toBeUndefined();
    expect(v.check('f', field('lookahead', 'zzz'))).toBeUndefined();
  });

  it('lets keys that patternProperties described through even with additionalProperties false', () => {
    const v = validator({ headers: { type: 'object', patternProperties: { '^x-': { type: 'string' } }, additionalProperties: false } });
    expect(v.check('f', field('headers', { 'x-trace': '1' }))).toBeUndefined();
  });

  it('leaves a schema it cannot check to the client instead of throwing (a $ref to itself)', () => {
    const v = validator({ tree: { type: 'object', properties: { child: { $ref: '#' } } } });
    expect(() => v.check('f', field('tree', { child: { child: {} } }))).not.toThrow();
  });
});
