import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createParser, type ParserFormat, type ParserOptions } from '../../parsers/index.ts';
import { coalesceText, type ParserEvent } from '../../parsers/parser-events.ts';
import { callsOf, expectWellFormedCalls, feed, group, textOf } from './format-test-kit.ts';

/**
 * Runs ../shared/data/toolcall-vectors.sample.json (the repo and shared/ sit side by side) through
 * createParser: whole, one character per delta, random 1–8 character groupings and the vector's
 * own stream_chunks must all give the expected calls and content.
 */
interface Vector {
  id: string;
  format: string;
  raw_text: string;
  expected?: Array<{ name: string; arguments: Record<string, unknown> }>;
  expected_error?: string;
  expected_content?: string | null;
  stream_chunks?: string[] | 'per-character';
  mode?: 'streaming' | 'nonstreaming';
  tools?: string[];
}

const vectors = JSON.parse(readFileSync(new URL('../../../shared/data/toolcall-vectors.sample.json', import.meta.url), 'utf8')) as Vector[];

type Setup = { [F in ParserFormat]: { format: F; options?: ParserOptions<F> } }[ParserFormat];

/** Vector format name → how to parse it. Formats not listed here are not run by this file. */
const FORMATS: Record<string, Setup> = {
  hermes: { format: 'hermes' },
  mistral: { format: 'mistral' },
  llama3_json: { format: 'llama3-json' },
  deepseek_v3: { format: 'deepseek-v3' },
  deepseek_v31: { format: 'deepseek-v31' },
  'conveyor:functionary_v2': { format: 'functionary-v2' },
  'openai (gpt-oss harmony)': { format: 'harmony' },
};

/**
 * Where our content deliberately differs from what the vector recorded (vLLM drops text around
 * calls; we pass text outside calls through unchanged and exactly once).
 */
const CONTENT_OVERRIDES: Record<string, string> = {
  'llama3-01-text-around': 'Here is the result:  Would you like to know more?',
  'deepseek_v31-01': 'some prefix text some suffix text',
  // vLLM's own streaming/non-streaming divergence; the vector asks to pick one: we keep the text.
  'mistral-05-trailing-data': '\nextra trailing data',
};

const owned = vectors.filter((v) => Object.hasOwn(FORMATS, v.format));

function parse(v: Vector, deltas: readonly string[]): ParserEvent[] {
  const setup = FORMATS[v.format]!;
  const options = { ...setup.options, ...(v.tools ? { tools: v.tools } : {}) } as never;
  return feed(() => createParser(setup.format, options), deltas);
}

function check(v: Vector, events: ParserEvent[]): void {
  expectWellFormedCalls(events);
  const calls = callsOf(events);
  expect(calls.map((c) => ({ name: c.name, arguments: c.args }))).toEqual(v.expected ?? []);
  for (const call of calls) expect(JSON.parse(call.argsText)).toEqual(call.args);
  const content = textOf(events);
  if (Object.hasOwn(CONTENT_OVERRIDES, v.id)) expect(content).toBe(CONTENT_OVERRIDES[v.id]);
  else if (typeof v.expected_content === 'string') expect(content).toBe(v.expected_content);
  else expect(content).toBe('');
  if (v.expected_error !== undefined) expect(events.some((e) => e.type === 'malformed')).toBe(true);
}

describe('tool-call vectors', () => {
  it('covers every format mapped here', () => {
    expect(new Set(owned.map((v) => v.format))).toEqual(new Set(Object.keys(FORMATS)));
  });

  describe.each(owned.map((v) => [v.id, v] as const))('%s', (_id, v) => {
    const whole = coalesceText(parse(v, [v.raw_text]));

    it('whole text', () => {
      check(v, parse(v, [v.raw_text]));
    });

    it('one character per delta gives the same events', () => {
      const events = parse(v, v.raw_text.split(''));
      check(v, events);
      expect(coalesceText(events)).toEqual(whole);
    });

    it('random 1-8 character groupings give the same events', () => {
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 16 }), (sizes) => {
          expect(coalesceText(parse(v, group(v.raw_text, sizes)))).toEqual(whole);
        }),
        { numRuns: 100 },
      );
    });

    const chunks = v.stream_chunks;
    if (Array.isArray(chunks)) {
      it('its stream_chunks give the same events', () => {
        const events = parse(v, chunks);
        check(v, events);
        expect(coalesceText(events)).toEqual(whole);
      });
    }
  });
});
