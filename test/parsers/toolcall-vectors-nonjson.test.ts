import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planStepDependencies, type PlanStep } from '../../parsers/formats/llmcompiler-plan-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText, type ParserEvent, type ToolCallParser } from '../../parsers/parser-events.ts';
import { callsOf, expectWellFormedCalls, feed, group, textOf } from './format-test-kit.ts';

/** One entry of ../shared/data/toolcall-vectors.sample.json (see its README). */
interface Vector {
  id: string;
  format: string;
  raw_text: string;
  expected?: Array<{ name: string; arguments: Record<string, unknown>; idx?: number; dependencies?: number[]; thought?: string }>;
  expected_error?: string;
  expected_content?: string | null;
  expected_partial_units?: unknown[];
  stream_chunks?: string[] | 'per-character';
  tools_schema?: Record<string, Record<string, string>>;
}

const vectors = JSON.parse(readFileSync(new URL('../../../shared/data/toolcall-vectors.sample.json', import.meta.url), 'utf8')) as Vector[];

/** The parser each non-JSON vector format maps to, with the options the vector implies. */
const parsers: Record<string, (v: Vector) => () => ToolCallParser> = {
  pythonic: () => () => createParser('pythonic'),
  'sglang:pythonic': () => () => createParser('pythonic'),
  qwen3_coder: (v) => () =>
    createParser('qwen3-coder', {
      toolDefinitions: Object.entries(v.tools_schema ?? {}).map(([name, params]) => ({
        type: 'function' as const,
        function: { name, parameters: { type: 'object', properties: Object.fromEntries(Object.entries(params).map(([p, type]) => [p, { type }])) } },
      })),
    }),
  'llmcompiler:plan': () => () => createParser('llmcompiler-plan'),
  'conveyor:python_code_block': () => () => createParser('code-fence'),
};

const mine = vectors.filter((v) => Object.hasOwn(parsers, v.format));

/** Every split the README asks for: whole, per character, random 1–8 groupings, and the vector's own chunks. */
function splits(v: Vector): Array<[string, string[]]> {
  const out: Array<[string, string[]]> = [
    ['whole', [v.raw_text]],
    ['per character', v.raw_text.split('')],
  ];
  for (const [i, sizes] of fc.sample(fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 12 }), { numRuns: 20, seed: v.id.length }).entries()) {
    out.push([`random grouping ${i}`, group(v.raw_text, sizes)]);
  }
  if (Array.isArray(v.stream_chunks)) {
    expect(v.stream_chunks.join('')).toBe(v.raw_text);
    out.push(['stream_chunks', v.stream_chunks]);
  }
  return out;
}

const stepsOf = (events: readonly ParserEvent[]): PlanStep[] => events.flatMap((e) => (e.type === 'call-piece' && e.piece.kind === 'step' ? [e.piece] : []));

/** The thought an LLMCompiler step carries: the `Thought:` line right before it. */
function thoughtsOf(raw: string): Map<number, string> {
  const thoughts = new Map<number, string>();
  const lines = raw.split('\n');
  lines.forEach((l, i) => {
    const step = /^(\d+)\./.exec(l);
    const thought = /^Thought: (.*)$/.exec(lines[i - 1] ?? '');
    if (step && thought) thoughts.set(Number(step[1]), thought[1]!);
  });
  return thoughts;
}

describe('tool-call vectors (non-JSON formats)', () => {
  it('covers every vector of the formats this suite owns', () => {
    expect(mine.map((v) => v.format).sort()).toEqual(
      expect.arrayContaining(['conveyor:python_code_block', 'llmcompiler:plan', 'pythonic', 'qwen3_coder', 'sglang:pythonic']),
    );
  });

  describe.each(mine.map((v) => [v.id, v] as const))('%s', (_id, v) => {
    const make = parsers[v.format]!(v);
    const reference = coalesceText(feed(make, [v.raw_text]));

    it('gives identical events for every split', () => {
      for (const [how, deltas] of splits(v)) {
        const events = feed(make, deltas);
        expectWellFormedCalls(events);
        expect(coalesceText(events), how).toEqual(reference);
      }
    });

    if (v.format === 'llmcompiler:plan') {
      it('yields the expected plan steps, dependencies and thoughts', () => {
        const steps = stepsOf(reference);
        const thoughts = thoughtsOf(v.raw_text);
        expect(
          steps.map((s) => ({
            idx: s.index,
            name: s.tool,
            arguments: { args: s.args },
            dependencies: planStepDependencies(s),
            ...(thoughts.has(s.index) ? { thought: thoughts.get(s.index) } : {}),
          })),
        ).toEqual(v.expected);
        expect(callsOf(reference)).toHaveLength(1);
      });
    } else if (v.expected) {
      it('yields the expected calls, with argument fragments that parse to them', () => {
        const calls = callsOf(reference);
        expect(calls.map((c) => ({ name: c.name, arguments: c.args }))).toEqual(v.expected!.map((e) => ({ name: e.name, arguments: e.arguments })));
        for (const [i, c] of calls.entries()) expect(JSON.parse(c.argsText)).toEqual(v.expected![i]!.arguments);
      });
    }

    if (v.expected_content !== undefined) {
      it('keeps the expected content', () => {
        expect(textOf(reference)).toBe(v.expected_content ?? '');
      });
    }

    if (v.format === 'conveyor:python_code_block') {
      it('hands over each partial unit before the rest of the call is decoded', () => {
        // The unit must reach the tool while "print" is still undecoded, so the plugin's error can abort early.
        const parser = make();
        let decoded = '';
        const units: Array<{ unit: string; decodedSoFar: string }> = [];
        for (const ch of v.raw_text) {
          decoded += ch;
          for (const e of parser.push(ch)) {
            if (e.type === 'call-piece' && e.piece.kind === 'line') units.push({ unit: e.piece.text.replace(/\n$/, ''), decodedSoFar: decoded });
          }
        }
        parser.end();
        expect(units.slice(0, v.expected_partial_units!.length).map((u) => u.unit)).toEqual(v.expected_partial_units);
        expect(units[0]!.decodedSoFar).not.toContain('print');
      });
    }
  });
});
