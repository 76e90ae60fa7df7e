import { redumpJson } from '../../parsers/formats/redump-json.ts';
import { describe, expect, it } from 'vitest';
import { createLlmCompilerPlanParser } from '../../parsers/formats/llmcompiler-plan-parser.ts';
import { createPythonicParser } from '../../parsers/formats/pythonic-parser.ts';
import { MAX_PYTHON_NESTING, PythonNestingError, readPythonArguments, readPythonLiteral } from '../../parsers/formats/python-value-parser.ts';
import type { ParserEvent } from '../../parsers/parser-events.ts';

// Regression (review 4, finding 2): a plan step `1. format("x {}", [[[…20,000…]]])` made the whole
// request a 500. The Python-literal parser built the value with its explicit stack, and the next
// round's JSON.stringify of the plan's arguments overflowed the call stack. Python literals now
// nest at most as deep as JSON arguments (the JSON scanner's maxNesting, 256).

const nested = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
const events = (parser: { push(text: string): ParserEvent[]; end(): ParserEvent[] }, text: string) => [...parser.push(text), ...parser.end()];

describe('Python literals nested past MAX_PYTHON_NESTING', () => {
  it('reads a literal as deep as the limit and refuses one level more, by name', () => {
    expect(MAX_PYTHON_NESTING).toBe(256);
    expect(readPythonLiteral(nested(256))).toMatchObject({ json: nested(256) });
    const refused = readPythonLiteral(nested(257));
    expect('error' in refused && refused.error).toBeInstanceOf(PythonNestingError);
    expect('error' in refused && refused.error.message).toBe('nested deeper than 256');
    // Tuples and dicts count as lists do.
    expect(readPythonLiteral(`${'({"a": '.repeat(129)}1${'})'.repeat(129)}`)).toHaveProperty('error');
  });

  it('counts the arguments of a call from their own brackets, not the list around them', () => {
    expect(readPythonArguments(`"x", ${nested(256)}`)).toHaveProperty('value');
    expect(readPythonArguments(`"x", ${nested(257)}`)).toHaveProperty('error');
  });

  it('refuses 20,000 levels without overflowing any stack', () => {
    expect(readPythonLiteral(nested(20_000))).toHaveProperty('error');
  });
});

describe('a plan step whose literal nests too deep', () => {
  it('keeps its argument text as the one argument, so the plan arguments stringify', () => {
    const argsText = `"x {}", ${nested(20_000)}`;
    const all = events(createLlmCompilerPlanParser(), `1. format(${argsText})\n2. join()\n`);
    const end = all.find((e) => e.type === 'call-end');
    expect(end?.type === 'call-end' && end.args).toEqual({
      steps: [
        { index: 1, tool: 'format', args: [argsText], raw: `1. format(${argsText})` },
        { index: 2, tool: 'join', args: [], raw: '2. join()' },
      ],
    });
    // What the gateway's next round writes into the assistant turn (gateway/round-messages.ts).
    const argsJson = all.flatMap((e) => (e.type === 'call-args' ? [e.text] : [])).join('');
    expect(JSON.parse(argsJson)).toEqual(end?.type === 'call-end' && JSON.parse(JSON.stringify(end.args)));
  });
});

describe('a pythonic call whose argument nests too deep', () => {
  it('is malformed, its text released as content, as a JSON call nested as deep is', () => {
    const text = `[f(x=${nested(20_000)})]`;
    const all = events(createPythonicParser(), text);
    expect(all.some((e) => e.type === 'call-end')).toBe(false);
    expect(all).toContainEqual({ type: 'malformed', callId: 'call_1', reason: 'pythonic: nested deeper than 256' });
    expect(all.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('')).toBe(text);
  });

  it('still calls with an argument as deep as the limit', () => {
    const all = events(createPythonicParser(), `[f(x=${nested(256)})]`);
    expect(all).toContainEqual({ type: 'call-end', callId: 'call_1', args: { x: JSON.parse(nested(256)) } });
  });
});

describe('redumpJson (qwen3-coder array and object parameters)', () => {
  it('reads 256 levels, and takes a deeper value for text that is no JSON instead of overflowing the stack', () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    expect(redumpJson(nested(256))?.json).toBe(nested(256));
    expect(redumpJson(nested(20_000))).toBeUndefined();
    expect(redumpJson(`{"a": ${nested(20_000)}}`)).toBeUndefined();
  });
});
