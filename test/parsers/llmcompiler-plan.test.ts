import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { createLlmCompilerPlanParser, planStepDependencies, type LlmCompilerPlanParserOptions, type PlanStep } from '../../parsers/formats/llmcompiler-plan-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText, type ParserEvent } from '../../parsers/parser-events.ts';
import { callsOf, expectWellFormedCalls, feed, malformedOf, perChar, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';

const make = (options?: LlmCompilerPlanParserOptions) => () => createLlmCompilerPlanParser(options);
const parse = (input: string, options?: LlmCompilerPlanParserOptions) => {
  const events = whole(make(options), input);
  expectWellFormedCalls(events);
  return events;
};
const stepsOf = (events: readonly ParserEvent[]): PlanStep[] =>
  events.flatMap((e) => (e.type === 'call-piece' && e.piece.kind === 'step' ? [e.piece] : []));
const step = (index: number, tool: string, args: unknown[], raw: string, callId = 'call_1'): ParserEvent => ({
  type: 'call-piece',
  callId,
  piece: { kind: 'step', index, tool, args, raw },
});

const PLAN = [
  '1. search("cheetah")',
  '2. math("cheetah speed if 1.3x slower?", ["$1"])',
  '3. search("greyhound")',
  '4. math("ratio of $2 to greyhound speed", ["$2", "${3}"])',
  'Thought: I can answer the question now.',
  '5. join()<END_OF_PLAN>',
  '',
].join('\n');

describe('llmcompiler-plan parser', () => {
  it('makes a plan one call whose pieces are its steps, with thoughts as text', () => {
    const events = parse(PLAN);
    expect(events.filter((e) => e.type !== 'call-args')).toEqual([
      start('plan'),
      step(1, 'search', ['cheetah'], '1. search("cheetah")'),
      step(2, 'math', ['cheetah speed if 1.3x slower?', ['$1']], '2. math("cheetah speed if 1.3x slower?", ["$1"])'),
      step(3, 'search', ['greyhound'], '3. search("greyhound")'),
      step(4, 'math', ['ratio of $2 to greyhound speed', ['$2', '${3}']], '4. math("ratio of $2 to greyhound speed", ["$2", "${3}"])'),
      text('Thought: I can answer the question now.\n'),
      step(5, 'join', [], '5. join()'),
      { type: 'call-end', callId: 'call_1', args: { steps: stepsOf(events).map(({ kind: _kind, ...s }) => s) } },
      text('\n'),
    ]);
    expect(stepsOf(events).map((s) => planStepDependencies(s))).toEqual([[], [1], [], [2, 3], [1, 2, 3, 4]]);
  });

  it('emits each step the moment its line ends', () => {
    const parser = createLlmCompilerPlanParser();
    expect(parser.push('1. search("chee')).toEqual([]);
    const atNewline = parser.push('tah")\n2. sea');
    expect(atNewline.filter((e) => e.type !== 'call-args')).toEqual([start('plan'), step(1, 'search', ['cheetah'], '1. search("cheetah")')]);
    expect(parser.push('rch("x")')).toEqual([]);
    expect(parser.push('\n').filter((e) => e.type !== 'call-args')).toEqual([step(2, 'search', ['x'], '2. search("x")')]);
  });

  // Regression: call-args held JSON.stringify(step), so an id past 2^53 in a step's literals
  // reached the plan's arguments rounded (12345678901234567890 as 12345678901234567000).
  it("keeps every digit of a big integer in call-args, and floats as json.dumps writes them", () => {
    const [plan] = callsOf(parse('1. fetch(12345678901234567890, 1.0, -0.0)\n2. calc($1 * 2)\n3. join()\n'));
    expect(plan!.argsText).toBe(
      '{"steps":[{"index":1,"tool":"fetch","args":[12345678901234567890,1.0,-0.0],"raw":"1. fetch(12345678901234567890, 1.0, -0.0)"},' +
        '{"index":2,"tool":"calc","args":["$1 * 2"],"raw":"2. calc($1 * 2)"},{"index":3,"tool":"join","args":[],"raw":"3. join()"}]}',
    );
  });

  it('keeps arguments that are not literals as LLMCompiler does: one raw string', () => {
    const steps = stepsOf(parse('1. search(query="x")\n2. calc($1 * 2)\n3. f(1, (2, 3), {"k": None}, \'é😀\')\n4. join()\n'));
    expect(steps.map((s) => s.args)).toEqual([['query="x"'], ['$1 * 2'], [1, [2, 3], { k: null }, 'é😀'], []]);
    expect(planStepDependencies(steps[1]!)).toEqual([1]);
  });

  it('releases prose lines, including numbered prose, as they stream', () => {
    const input = 'Plan:\n1. First, search.\n1. search("x")  #E1\n2. join()\nDone.';
    const events = parse(input);
    expect(textOf(events)).toBe('Plan:\n1. First, search.\nDone.');
    expect(stepsOf(events).map((s) => s.raw)).toEqual(['1. search("x")  #E1', '2. join()']);
    const parser = createLlmCompilerPlanParser();
    expect(parser.push('1. First')).toEqual([]); // could still be "1. First(…)"
    expect(parser.push(', search')).toEqual([text('1. First, search')]);
  });

  it('ends a plan at <END_OF_PLAN> even without join(), and accepts CRLF lines', () => {
    const events = parse('1. search("a")\r\n2. search("b")\r\n<END_OF_PLAN>');
    expect(callsOf(events)[0]!.args).toEqual({
      steps: [
        { index: 1, tool: 'search', args: ['a'], raw: '1. search("a")' },
        { index: 2, tool: 'search', args: ['b'], raw: '2. search("b")' },
      ],
    });
    expect(malformedOf(events)).toEqual([]);
  });

  it('reports a truncated step line and a plan without join() as malformed, streamed or whole', () => {
    const input = '1. search("a")\n2. search("gr';
    const events = parse(input);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: expect.stringContaining('step line') }]);
    expect(textOf(events)).toBe('2. search("gr');
    expect(perChar(make(), input)).toEqual(events);
    expect(malformedOf(parse('1. search("a")\n'))).toEqual([{ type: 'malformed', callId: 'call_1', reason: expect.stringContaining('without join()') }]);
    expect(callsOf(parse('1. search("a")\n'))).toEqual([]);
  });

  it('starts a new plan after a finished one, with its own id', () => {
    const events = parse('1. a()\n2. join()\n1. b()\n2. join()', { callIdPrefix: 'p_', toolName: 'executor' });
    expect(callsOf(events).map((c) => [c.callId, c.name])).toEqual([
      ['p_1', 'executor'],
      ['p_2', 'executor'],
    ]);
  });

  it('tells an end marker that begins with a line end from the line end however the text is split', () => {
    const options = { endMarker: '\nEND' };
    for (const input of ['1. f()\nEND', '1. f()\nENDx\n', '1. f()\nEx\n2. join()']) {
      const expected = whole(make(options), input);
      expect(perChar(make(options), input)).toEqual(expected);
      for (let cut = 0; cut <= input.length; cut++) expect(coalesceText(feed(make(options), [input.slice(0, cut), input.slice(cut)]))).toEqual(expected);
    }
    expect(callsOf(parse('1. f()\nEND', options))).toHaveLength(1);
    expect(malformedOf(perChar(make(options), '1. f()\nEND'))).toEqual([]);
  });

  it('is registered as "llmcompiler-plan" and validates its options', () => {
    expect(callsOf(whole(() => createParser('llmcompiler-plan'), PLAN))).toHaveLength(1);
    expect(() => createLlmCompilerPlanParser({ joinTool: '' })).toThrow(InvalidRequestError);
  });
});

const stepLine = fc
  .tuple(fc.integer({ min: 1, max: 12 }), fc.constantFrom('search', 'math', 'join', 'calc'), fc.constantFrom('"x"', '"$1 é😀"', '"a", ["$1", "${2}"]', '$1 * 2', '', 'q="y"', "'''t'''"), fc.constantFrom('', '  #E1', ' '))
  .map(([n, tool, a, tail]) => `${n}. ${tool}(${a})${tail}`);
const planText = fc
  .array(fc.oneof({ weight: 3, arbitrary: stepLine }, { weight: 1, arbitrary: fc.constantFrom('Thought: next.', '', 'Some prose.', '3. Not a step', '1.5 is a number') }), { maxLength: 8 })
  .chain((lines) => fc.tuple(fc.constantFrom('\n', '\r\n'), fc.constantFrom('', '<END_OF_PLAN>', '\n', '<END_OF'), fc.nat()).map(([eol, last, cut]) => {
    const full = lines.join(eol) + last;
    return cut % 5 === 0 ? full.slice(0, cut % (full.length + 1)) : full;
  }));
const fragments = ['1. ', '2.', 'search(', '"x")', ')', '\n', 'join()', '<END_OF_PLAN>', '<END_', 'OF_PLAN>', 'Thought: ', ' ', '😀', '\uD83D', '\uDE00', '#E1', '$1', '${2}'];
const modelOutput = fc.oneof(
  planText,
  fc.array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fragments) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) }), { maxLength: 30 }).map((p) => p.join('')),
);

describe('llmcompiler-plan parser: properties', () => {
  splitInvarianceProperties(make(), modelOutput, { runs: 150 });

  it('loses and repeats nothing: text and step lines, in order, are the output without its end markers', () => {
    fc.assert(
      fc.property(modelOutput, (input) => {
        const events = feed(make(), input.split(''));
        const rebuilt = events.map((e) => (e.type === 'text' ? e.text : e.type === 'call-piece' && e.piece.kind === 'step' ? e.piece.raw : '')).join('');
        // The markers consumed are exactly those the input holds; rebuilt text may spell one across pieces.
        const lines = (t: string) => t.replace(/[\r\n]/g, '');
        expect(lines(rebuilt)).toBe(lines(input.replaceAll('<END_OF_PLAN>', '')));
      }),
      { numRuns: 150 },
    );
  });
});
