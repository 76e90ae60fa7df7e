import { describe, expect, it } from 'vitest';
import { createParser } from '../../parsers/index.ts';
import { callsOf, whole } from './format-test-kit.ts';

// The JSON formats forward the model's arguments text, so a client reads every digit of an id
// past 2^53 and every float as written; only `args`, made of doubles, rounds. Pinned here
// because a re-serialising shortcut (JSON.stringify of the parsed args) would silently lose them.
const ARGS = '{"id": 12345678901234567890, "x": 1.0, "z": -0.0, "big": [9007199254740993]}';

describe('JSON formats keep argument numbers exactly as the model wrote them', () => {
  it.each([
    ['hermes', `<tool_call>{"name": "f", "arguments": ${ARGS}}</tool_call>`],
    ['mistral', `[TOOL_CALLS] [{"arguments": ${ARGS}, "name": "f"}]`],
    ['mistral', `[TOOL_CALLS]f[ARGS]${ARGS}`],
    ['llama3-json', `{"name": "f", "parameters": ${ARGS}}`],
    ['functionary-v3', `f\n${ARGS}`],
    ['deepseek-v31', `<｜tool▁call▁begin｜>f<｜tool▁sep｜>${ARGS}<｜tool▁call▁end｜>`],
    ['harmony', `<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>${ARGS}<|call|>`],
  ] as const)('%s', (format, output) => {
    const calls = callsOf(whole(() => createParser(format), output));
    expect(calls.map((c) => c.argsText)).toEqual([ARGS]);
  });
});
