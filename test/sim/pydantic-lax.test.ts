import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLaxBool, readLaxFloat, readLaxInt } from '../../sim/pydantic-lax.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario, postChat } from './sim-test-helpers.ts';

// vLLM's request models are pydantic models in lax mode: numeric strings and 0/1 booleans are
// taken, and what is refused comes back with pydantic's error type and words.

describe('the lax readers', () => {
  it('read integers as Python int() does, and refuse fractions and words', () => {
    for (const [input, value] of [[5, 5], ['5', 5], [' 7 ', 7], ['+3', 3], ['-2', -2], ['1_000', 1000], ['5.0', 5], ['5.', 5], [5.0, 5], [true, 1], [false, 0]] as const) {
      expect(readLaxInt(input)).toEqual({ value });
    }
    expect(readLaxInt(5.5)).toEqual({ type: 'int_from_float', msg: 'Input should be a valid integer, got a number with a fractional part' });
    for (const input of ['5.5', 'five', '', '1__0', '0x10', '1e3']) {
      expect(readLaxInt(input)).toMatchObject({ type: 'int_parsing' });
    }
    for (const input of [[], {}, [5]]) expect(readLaxInt(input)).toEqual({ type: 'int_type', msg: 'Input should be a valid integer' });
  });

  it('read floats from numbers and numeric strings, and refuse the rest', () => {
    for (const [input, value] of [[0.5, 0.5], ['0.5', 0.5], ['.5', 0.5], [' 1e-3 ', 0.001], ['2', 2], ['-1.5E2', -150], [true, 1]] as const) {
      expect(readLaxFloat(input)).toEqual({ value });
    }
    for (const input of ['hot', '', '1.2.3', 'inf', 'nan', '0x1p3']) {
      expect(readLaxFloat(input)).toEqual({ type: 'float_parsing', msg: 'Input should be a valid number, unable to parse string as a number' });
    }
    expect(readLaxFloat(null)).toEqual({ type: 'float_type', msg: 'Input should be a valid number' });
  });

  it("read booleans from 0, 1 and pydantic's words in any case, nothing else", () => {
    for (const input of [true, 1, 'true', 'True', 'YES', 'on', 't', 'y', '1']) expect(readLaxBool(input)).toEqual({ value: true });
    for (const input of [false, 0, 'false', 'False', 'no', 'OFF', 'f', 'n', '0']) expect(readLaxBool(input)).toEqual({ value: false });
    for (const input of [2, 0.5, 'maybe', ' true', '']) {
      expect(readLaxBool(input)).toEqual({ type: 'bool_parsing', msg: 'Input should be a valid boolean, unable to interpret input' });
    }
    expect(readLaxBool([])).toEqual({ type: 'bool_type', msg: 'Input should be a valid boolean' });
  });
});

describe('the simulator takes what vLLM takes', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', 'Hello world!')] });
  });
  afterAll(() => sim.close());

  const messages = [{ role: 'user', content: 'say hello' }];

  it('serves numeric strings and word booleans as the numbers and booleans they spell', async () => {
    const res = await postChat(sim.url, { messages, max_tokens: '2', temperature: '0.7', top_k: '40', seed: '42', stream: 'false', ignore_eos: 'yes' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { usage: { completion_tokens: number }; choices: Array<{ finish_reason: string }> };
    // max_tokens "2" with ignore_eos "yes": two tokens, cut by the length limit.
    expect(body.usage.completion_tokens).toBe(2);
    expect(body.choices[0]!.finish_reason).toBe('length');
  });

  it('streams when `stream` is the string "true"', async () => {
    const res = await postChat(sim.url, { messages, stream: 'true' });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await res.text()).toContain('data: [DONE]');
  });

  it("checks a coerced value's range as SamplingParams does, the value printed as the float it became", async () => {
    const res = await postChat(sim.url, { messages, temperature: '-1' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('temperature must be non-negative, got -1.0.');
  });

  it("refuses what pydantic refuses, in pydantic's words, one line per field", async () => {
    const res = await postChat(sim.url, { messages, max_tokens: '5.5', temperature: 'hot', stream: 'maybe' });
    expect(res.status).toBe(400);
    const [header, ...lines] = ((await res.json()) as { error: { message: string } }).error.message.split('\n');
    expect(header).toBe('3 validation errors:');
    // In the schema's field order, which is not quite protocol.py's.
    expect(lines.sort()).toEqual([
      "  {'type': 'bool_parsing', 'loc': ('body', 'stream'), 'msg': 'Input should be a valid boolean, unable to interpret input'}",
      "  {'type': 'float_parsing', 'loc': ('body', 'temperature'), 'msg': 'Input should be a valid number, unable to parse string as a number'}",
      "  {'type': 'int_parsing', 'loc': ('body', 'max_tokens'), 'msg': 'Input should be a valid integer, unable to parse string as an integer'}",
    ]);
  });

  it('refuses a completions logprobs count given as a string, as it refuses the number', async () => {
    const res = await fetch(`${sim.url}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'say hello', logprobs: '2' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('logprobs are not supported by the simulator.');
  });
});
