import fc from 'fast-check';
import { expect, it } from 'vitest';
import { coalesceText, type ParserEvent, type Piece, type ToolCallParser } from '../../parsers/parser-events.ts';
import { referenceJsonParse } from '../support/reference-json.ts';

/**
 * Feeds `deltas` to a fresh parser and returns every event, `end()` included: through pushFast
 * where the parser has it, as the gateway drives it, each call id it answers expanded to the
 * call-args event it stands for.
 */
export function feed(make: () => ToolCallParser, deltas: readonly string[]): ParserEvent[] {
  const parser = make();
  if (parser.pushFast === undefined) return feedPush(() => parser, deltas);
  const events: ParserEvent[] = [];
  for (const delta of deltas) {
    const out = parser.pushFast(delta);
    if (typeof out === 'string') events.push({ type: 'call-args', callId: out, text: delta });
    else events.push(...out);
  }
  events.push(...parser.end());
  return events;
}

/** feed() through push alone. */
export function feedPush(make: () => ToolCallParser, deltas: readonly string[]): ParserEvent[] {
  const parser = make();
  const events: ParserEvent[] = [];
  for (const delta of deltas) events.push(...parser.push(delta));
  events.push(...parser.end());
  return events;
}

/** The coalesced events of the whole text in one delta. */
export function whole(make: () => ToolCallParser, text: string): ParserEvent[] {
  return coalesceText(feed(make, [text]));
}

/** The coalesced events of the text one UTF-16 unit per delta (splitting surrogate pairs). */
export function perChar(make: () => ToolCallParser, text: string): ParserEvent[] {
  return coalesceText(feed(make, text.split('')));
}

/**
 * The coalesced events of `input` in one delta (well-formed), checked to be the same with it split
 * anywhere in two and one character (code point) at a time.
 */
export function sameEveryWay(make: () => ToolCallParser, input: string): ParserEvent[] {
  const events = whole(make, input);
  expectWellFormedCalls(events);
  for (let cut = 1; cut < input.length; cut++) expect(coalesceText(feed(make, [input.slice(0, cut), input.slice(cut)])), `cut at ${cut}`).toEqual(events);
  expect(coalesceText(feed(make, [...input]))).toEqual(events);
  return events;
}

/** Cuts `text` into consecutive groups of the given sizes (cycled), in UTF-16 code units. */
export function group(text: string, sizes: readonly number[]): string[] {
  const out: string[] = [];
  for (let at = 0, i = 0; at < text.length; i++) {
    const size = sizes[i % sizes.length]!;
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

export function textOf(events: readonly ParserEvent[]): string {
  return events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
}

export function reasoningOf(events: readonly ParserEvent[]): string {
  return events.flatMap((e) => (e.type === 'reasoning' ? [e.text] : [])).join('');
}

/** Every finished call: its name, final args, and the concatenation of its call-args fragments. */
export function callsOf(events: readonly ParserEvent[]): Array<{ callId: string; name: string; args: Record<string, unknown>; argsText: string }> {
  const names = new Map<string, string>();
  const texts = new Map<string, string>();
  const calls = [];
  for (const e of events) {
    if (e.type === 'call-start') names.set(e.callId, e.name);
    else if (e.type === 'call-args') texts.set(e.callId, (texts.get(e.callId) ?? '') + e.text);
    else if (e.type === 'call-end') calls.push({ callId: e.callId, name: names.get(e.callId)!, args: e.args, argsText: texts.get(e.callId) ?? '' });
  }
  return calls;
}

export function malformedOf(events: readonly ParserEvent[]): Array<Extract<ParserEvent, { type: 'malformed' }>> {
  return events.filter((e): e is Extract<ParserEvent, { type: 'malformed' }> => e.type === 'malformed');
}

/**
 * Call events are well formed: each call-start has a fresh id; its pieces and argument
 * fragments come before its call-end or malformed, never after; at most one call is open at a
 * time; and the fragments of every finished call JSON.parse to its final args (see argsOfText).
 * (Each of this kit's formats has a unit test showing its calls do stream call-args.)
 */
export function expectWellFormedCalls(events: readonly ParserEvent[]): void {
  const seen = new Set<string>();
  let open: string | undefined;
  const args = new Map<string, string>();
  const pieces = new Map<string, Piece[]>();
  for (const e of events) {
    switch (e.type) {
      case 'call-start':
        expect(open).toBeUndefined();
        expect(seen.has(e.callId)).toBe(false);
        seen.add(e.callId);
        open = e.callId;
        break;
      case 'call-piece':
      case 'call-args':
        expect(e.callId).toBe(open);
        if (e.type === 'call-args') args.set(e.callId, (args.get(e.callId) ?? '') + e.text);
        else pieces.set(e.callId, [...(pieces.get(e.callId) ?? []), e.piece]);
        break;
      case 'call-end':
        expect(e.callId).toBe(open);
        // (The code-fence parser, usable as an inner parser, streams no call-args.)
        if (args.has(e.callId)) expect(argsOfText(args.get(e.callId)!)).toEqual(e.args);
        expectPiecesInArgs(pieces.get(e.callId) ?? [], e.args);
        open = undefined;
        break;
      case 'malformed':
        // One without a call id is an attempt that never started; it ends nothing (withCodeFences
        // reports the inner format's failed attempts while a fence's call is open).
        if (e.callId === undefined) break;
        expect(e.callId).toBe(open);
        open = undefined;
        break;
      default:
        break;
    }
  }
  expect(open).toBeUndefined();
}

/**
 * What a plugin acted on while the call streamed is what the finished call holds: each `field`
 * piece is the args' value at its path, a call's `line` pieces, numbered from 1, join to one of
 * its string arguments, and its `step` pieces are its `steps`, in order.
 */
export function expectPiecesInArgs(pieces: readonly Piece[], args: Record<string, unknown>): void {
  const lines = pieces.flatMap((p) => (p.kind === 'line' ? [p] : []));
  const steps = pieces.flatMap((p) => (p.kind === 'step' ? [p] : []));
  for (const p of pieces) {
    if (p.kind !== 'field') continue;
    let at: unknown = args;
    for (const key of p.path) at = (at as Record<string | number, unknown>)[key];
    expect(at, `field ${p.path.join('.')}`).toEqual(p.value);
  }
  if (lines.length > 0) {
    expect(lines.map((l) => l.lineNo)).toEqual(lines.map((_, i) => i + 1));
    expect(Object.values(args)).toContain(lines.map((l) => l.text).join(''));
  }
  if (steps.length > 0) expect(steps.map(({ kind: _, ...step }) => step)).toEqual(args['steps']);
}

/**
 * The args a call-args text stands for: JSON.parse's, but a number no finite double holds stays
 * its literal, as a string (parsers/json/json-number-value.ts), where JSON.parse gives Infinity.
 */
export function argsOfText(text: string): unknown {
  // Outside strings, quote each such literal; strings are skipped whole, escapes and all.
  const quoted = text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (token) =>
    token.startsWith('"') || Number.isFinite(Number(token)) ? token : `"${token}"`,
  );
  return referenceJsonParse(quoted);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The split-invariance properties every format must have: the same coalesced events for the
 * whole text, one character per delta, every 2-way split and random 1–8 character groupings
 * (with empty deltas), well-formed calls, and no text event holding half a character.
 */
export function splitInvarianceProperties(
  make: () => ToolCallParser,
  outputs: fc.Arbitrary<string>,
  { runs = 150, malformed = true, minCalls = 30 }: { runs?: number; malformed?: boolean; minCalls?: number } = {},
): void {
  it('one character per delta (splitting surrogate pairs) equals the whole text', () => {
    fc.assert(
      fc.property(outputs, (text) => {
        expect(perChar(make, text)).toEqual(whole(make, text));
      }),
      { numRuns: runs },
    );
  });

  it('every 2-way split equals the whole text', () => {
    fc.assert(
      fc.property(outputs, (text) => {
        const expected = whole(make, text);
        for (let cut = 0; cut <= text.length; cut++) {
          expect(coalesceText(feed(make, [text.slice(0, cut), text.slice(cut)]))).toEqual(expected);
        }
      }),
      { numRuns: Math.ceil(runs / 2) },
    );
  });

  it('random groupings of 1-8 characters, with empty deltas, equal the whole text', () => {
    fc.assert(
      fc.property(outputs, fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 20 }), (text, sizes) => {
        const deltas = group(text, sizes).flatMap((d) => [d, '']);
        expect(coalesceText(feed(make, deltas))).toEqual(whole(make, text));
      }),
      { numRuns: runs },
    );
  });

  it('is fed outputs that exercise finished calls, failures and prose', () => {
    // Guards the generators: properties over outputs without calls would prove little.
    const samples = fc.sample(outputs, { numRuns: 300, seed: 42 }).map((t) => whole(make, t));
    expect(samples.filter((events) => events.some((e) => e.type === 'call-end')).length).toBeGreaterThan(minCalls);
    if (malformed) expect(samples.filter((events) => events.some((e) => e.type === 'malformed')).length).toBeGreaterThan(5);
    expect(samples.filter((events) => events.some((e) => e.type === 'text')).length).toBeGreaterThan(30);
  });

  it('emits well-formed calls, and no text event holding half a character', () => {
    fc.assert(
      fc.property(outputs, fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 20 }), (text, sizes) => {
        const events = feed(make, group(text, sizes));
        expectWellFormedCalls(events);
        if (!LONE_SURROGATE.test(text)) {
          for (const e of events) {
            if (e.type === 'text' || e.type === 'reasoning') expect(LONE_SURROGATE.test(e.text)).toBe(false);
          }
        }
      }),
      { numRuns: runs },
    );
  });
}

export const text = (t: string): ParserEvent => ({ type: 'text', text: t });
export const reasoning = (t: string): ParserEvent => ({ type: 'reasoning', text: t });
export const start = (name: string, callId = 'call_1'): ParserEvent => ({ type: 'call-start', callId, name });
export const args = (t: string, callId = 'call_1'): ParserEvent => ({ type: 'call-args', callId, text: t });
export const field = (path: Array<string | number>, value: unknown, callId = 'call_1'): ParserEvent => ({
  type: 'call-piece',
  callId,
  piece: { kind: 'field', path, value },
});
export const line = (t: string, lineNo: number, callId = 'call_1'): ParserEvent => ({
  type: 'call-piece',
  callId,
  piece: { kind: 'line', text: t, lineNo },
});
export const end = (value: Record<string, unknown>, callId = 'call_1'): ParserEvent => ({ type: 'call-end', callId, args: value });
