import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pyFloat } from '../../sim/sampling-params.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario, postChat } from './sim-test-helpers.ts';

// The 400s vLLM (v0.10–0.11) answers for requests its protocol.py validators or its SamplingParams
// refuse: the first kind through the RequestValidationError handler ("Bad Request", pydantic's
// wording), the second as the serving layer's BadRequestError with SamplingParams' own message.

const messages = [{ role: 'user', content: 'say hello' }];
const TOOLS = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', 'Hello world!')] });
});
afterAll(() => sim.close());

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: number };
}

async function chat(extra: Record<string, unknown>): Promise<{ status: number; body: ErrorBody & { usage?: { completion_tokens: number } } }> {
  const res = await postChat(sim.url, { messages, ...extra });
  return { status: res.status, body: await res.json() };
}

async function completion(extra: Record<string, unknown>): Promise<{ status: number; body: ErrorBody }> {
  const res = await fetch(`${sim.url}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'say hello', ...extra }) });
  return { status: res.status, body: await res.json() };
}

/** What vLLM's RequestValidationError handler sends for a ValueError of a `mode="before"` model validator. */
function modelValidatorError(message: string, param: string | null) {
  return { error: { message: `1 validation error:\n  {'type': 'value_error', 'loc': ('body',), 'msg': 'Value error, ${message}'}`, type: 'Bad Request', param, code: 400 } };
}

function samplingParamsError(message: string, param: string | null) {
  return { error: { message, type: 'BadRequestError', param, code: 400 } };
}

describe('tool_choice without tools (check_tool_usage)', () => {
  const refused = modelValidatorError('When using `tool_choice`, `tools` must be set.', null);

  it('refuses "auto", "required" and a named function when tools are absent or null', async () => {
    const named = { type: 'function', function: { name: 'lookup' } };
    for (const tool_choice of ['auto', 'required', named]) {
      expect(await chat({ tool_choice })).toEqual({ status: 400, body: refused });
      expect(await chat({ tool_choice, tools: null })).toEqual({ status: 400, body: refused });
    }
  });

  it('accepts "none" or a null tool_choice without tools, and any choice with tools, an empty list included', async () => {
    for (const extra of [{ tool_choice: 'none' }, { tool_choice: null }, { tool_choice: 'auto', tools: TOOLS }, { tool_choice: 'auto', tools: [] }]) {
      expect((await chat(extra)).status).toBe(200);
    }
  });
});

describe('a named tool_choice (check_tool_usage)', () => {
  const named = (name: string) => ({ type: 'function', function: { name } });

  it('refuses a name that is not among the tools, in vLLM\'s words', async () => {
    const refused = modelValidatorError('The tool specified in `tool_choice` does not match any of the specified `tools`', null);
    expect(await chat({ tools: TOOLS, tool_choice: named('search') })).toEqual({ status: 400, body: refused });
    expect(await chat({ tools: [], tool_choice: named('lookup') })).toEqual({ status: 400, body: refused });
    // A tool without the `function` shape matches nothing; it is no server error.
    expect(await chat({ tools: [{ type: 'mcp', name: 'lookup' }], tool_choice: named('lookup') })).toEqual({ status: 400, body: refused });
    expect((await chat({ tools: TOOLS, tool_choice: named('lookup') })).status).toBe(200);
  });

  it('refuses a named choice without a name, and a tool_choice string other than none, auto or required', async () => {
    const usage = 'Correct usage: `{"type": "function", "function": {"name": "my_function"}}`';
    expect((await chat({ tools: TOOLS, tool_choice: { type: 'function', function: {} } })).body).toEqual(
      modelValidatorError(`Expected field \`name\` in \`function\` in \`tool_choice\`! ${usage}`, null),
    );
    expect((await chat({ tools: TOOLS, tool_choice: { type: 'function' } })).body).toEqual(
      modelValidatorError(`Invalid value for \`function\`: \`None\` in \`tool_choice\`! ${usage}`, null),
    );
    expect((await chat({ tools: TOOLS, tool_choice: 'sometimes' })).body).toEqual(
      modelValidatorError('Invalid value for `tool_choice`: sometimes! Only named tools, "none", "auto" or "required" are supported.', null),
    );
  });
});

describe('top_logprobs without logprobs (check_logprobs)', () => {
  it('refuses top_logprobs > 0 unless logprobs is true, naming top_logprobs', async () => {
    const refused = modelValidatorError('when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs');
    expect(await chat({ top_logprobs: 2 })).toEqual({ status: 400, body: refused });
    expect(await chat({ top_logprobs: 2, logprobs: false })).toEqual({ status: 400, body: refused });
    expect((await chat({ top_logprobs: 0 })).status).toBe(200);
  });

  it('refuses a top_logprobs below -1, before asking for logprobs', async () => {
    const refused = modelValidatorError('`top_logprobs` must be a positive value or -1.', 'top_logprobs');
    expect(await chat({ top_logprobs: -2 })).toEqual({ status: 400, body: refused });
    expect(await chat({ top_logprobs: -3, logprobs: false })).toEqual({ status: 400, body: refused });
  });

  // vLLM 0.11 (vllm-project/vllm#24956) reads -1 as "the whole vocabulary"; the simulator refused it as a negative count.
  it('takes top_logprobs -1 as the whole vocabulary: like a positive count, it needs logprobs, which the simulator then refuses', async () => {
    const needsLogprobs = modelValidatorError('when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs');
    expect(await chat({ top_logprobs: -1 })).toEqual({ status: 400, body: needsLogprobs });
    expect(await chat({ top_logprobs: -1, logprobs: false })).toEqual({ status: 400, body: needsLogprobs });
    const asked = await chat({ top_logprobs: -1, logprobs: true });
    expect(asked.status).toBe(400);
    expect(asked.body.error).toMatchObject({ param: 'body.logprobs', message: expect.stringContaining('logprobs are not supported by the simulator.') });
    expect(asked.body.error.message).not.toContain('top_logprobs');
  });

  it('refuses logprobs themselves, which the scripted reply cannot give, rather than answering them null', async () => {
    const asked = await chat({ top_logprobs: 2, logprobs: true });
    expect(asked.status).toBe(400);
    expect(asked.body.error).toMatchObject({ param: 'body.logprobs', message: expect.stringContaining('logprobs are not supported by the simulator.') });
    expect((await chat({ logprobs: false })).status).toBe(200);
  });
});

describe('stream_options without stream (validate_stream_options)', () => {
  it('refuses stream_options that Python finds truthy unless stream is true, as a model validator\'s value_error', async () => {
    const refused = modelValidatorError('Stream options can only be defined when `stream=True`.', 'stream_options');
    for (const send of [chat, completion]) {
      expect(await send({ stream_options: { include_usage: true } })).toEqual({ status: 400, body: refused });
      expect(await send({ stream: false, stream_options: { include_usage: false } })).toEqual({ status: 400, body: refused });
    }
  });

  it('takes an empty stream_options without stream (an empty dict is falsy there)', async () => {
    expect((await chat({ stream_options: {} })).status).toBe(200);
    expect((await chat({ stream: false, stream_options: {} })).status).toBe(200);
    expect((await completion({ stream_options: {} })).status).toBe(200);
  });

  it('reports the tool check first: pydantic runs the later-defined validator first and stops there', async () => {
    expect(await chat({ tool_choice: 'auto', stream_options: { include_usage: true } })).toEqual({
      status: 400,
      body: modelValidatorError('When using `tool_choice`, `tools` must be set.', null),
    });
  });
});

describe('the shape of tools, and the generation-prompt flags', () => {
  it('refuses a tool without a function or its name, or of a type other than "function", as ChatCompletionToolsParam does', async () => {
    for (const [tools, loc] of [
      [[{ type: 'function' }], "('body', 'tools', 0, 'function')"],
      [[{ type: 'function', function: { description: 'no name' } }], "('body', 'tools', 0, 'function', 'name')"],
      [[{ type: 'custom', function: { name: 'f' } }], "('body', 'tools', 0, 'type')"],
    ] as const) {
      const res = await chat({ tools });
      expect(res.status, JSON.stringify(tools)).toBe(400);
      expect(res.body.error.message).toContain(`'loc': ${loc}`);
    }
    // type defaults to "function".
    expect((await chat({ tools: [{ function: { name: 'f', parameters: { type: 'object' } } }] })).status).toBe(200);
  });

  it('refuses continue_final_message with add_generation_prompt, both given (check_generation_prompt)', async () => {
    expect(await chat({ continue_final_message: true, add_generation_prompt: true })).toEqual({
      status: 400,
      body: modelValidatorError('Cannot set both `continue_final_message` and `add_generation_prompt` to True.', null),
    });
    expect((await chat({ continue_final_message: true })).status).toBe(200);
  });
});

describe("SamplingParams' checks", () => {
  it('refuses a negative temperature, with the value as Python prints a float', async () => {
    expect(await chat({ temperature: -1 })).toEqual({ status: 400, body: samplingParamsError('temperature must be non-negative, got -1.0.', 'temperature') });
    expect((await chat({ temperature: -0.5 })).body.error.message).toBe('temperature must be non-negative, got -0.5.');
    expect((await chat({ temperature: 0 })).status).toBe(200);
  });

  it('refuses top_p outside (0, 1] and top_k below -1', async () => {
    expect(await chat({ top_p: 0 })).toEqual({ status: 400, body: samplingParamsError('top_p must be in (0, 1], got 0.0.', 'top_p') });
    expect((await chat({ top_p: 1.5 })).body.error.message).toBe('top_p must be in (0, 1], got 1.5.');
    expect(await chat({ top_k: -2 })).toEqual({ status: 400, body: samplingParamsError('top_k must be 0 (disable), or at least 1, got -2.', null) });
    for (const extra of [{ top_p: 1 }, { top_p: 0.1 }, { top_k: -1 }, { top_k: 0 }, { top_k: 40 }]) expect((await chat(extra)).status).toBe(200);
  });

  // vLLM's SamplingParams checks min_p after top_k and before max_tokens; the simulator read no
  // min_p, so a 3 that vLLM refuses was a 200.
  it('refuses min_p outside [0, 1], after top_k and before max_tokens, on both routes', async () => {
    expect(await chat({ min_p: 3 })).toEqual({ status: 400, body: samplingParamsError('min_p must be in [0, 1], got 3.0.', null) });
    expect((await chat({ min_p: -0.1 })).body.error.message).toBe('min_p must be in [0, 1], got -0.1.');
    expect((await chat({ min_p: 3, top_k: -2 })).body.error.message).toBe('top_k must be 0 (disable), or at least 1, got -2.');
    expect((await chat({ min_p: 3, max_tokens: 0 })).body.error.message).toBe('min_p must be in [0, 1], got 3.0.');
    expect(await completion({ min_p: 1.5 })).toEqual({ status: 400, body: samplingParamsError('min_p must be in [0, 1], got 1.5.', null) });
    for (const extra of [{ min_p: 0 }, { min_p: 1 }, { min_p: 0.05 }, { min_p: null }]) expect((await chat(extra)).status).toBe(200);
  });

  it('refuses max_tokens below 1 in its own words, not as a schema error', async () => {
    expect(await chat({ max_tokens: -1 })).toEqual({ status: 400, body: samplingParamsError('max_tokens must be at least 1, got -1.', 'max_tokens') });
    expect((await chat({ max_tokens: 0 })).body.error.message).toBe('max_tokens must be at least 1, got 0.');
    expect((await chat({ max_completion_tokens: -5 })).body.error.message).toBe('max_tokens must be at least 1, got -5.');
    expect(await completion({ max_tokens: 0 })).toEqual({ status: 400, body: samplingParamsError('max_tokens must be at least 1, got 0.', 'max_tokens') });
  });

  it('takes `max_completion_tokens or max_tokens` as vLLM does: a 0 in the first falls through', async () => {
    const { status, body } = await chat({ max_completion_tokens: 0, max_tokens: 3 });
    expect(status).toBe(200);
    expect(body.usage!.completion_tokens).toBe(3);
  });

  it('refuses min_tokens below 0 or above max_tokens', async () => {
    expect(await chat({ min_tokens: -1 })).toEqual({ status: 400, body: samplingParamsError('min_tokens must be greater than or equal to 0, got -1.', null) });
    expect((await completion({ min_tokens: 17 })).body.error.message).toBe('min_tokens must be less than or equal to max_tokens=16, got 17.');
  });

  it('refuses presence_penalty and frequency_penalty outside [-2, 2], and a repetition_penalty not above 0', async () => {
    expect(await chat({ presence_penalty: 5 })).toEqual({ status: 400, body: samplingParamsError('presence_penalty must be in [-2, 2], got 5.0.', null) });
    expect(await chat({ frequency_penalty: -3 })).toEqual({ status: 400, body: samplingParamsError('frequency_penalty must be in [-2, 2], got -3.0.', null) });
    expect(await completion({ repetition_penalty: 0 })).toEqual({ status: 400, body: samplingParamsError('repetition_penalty must be greater than zero, got 0.0.', null) });
    // vLLM bounds repetition_penalty only below.
    for (const extra of [{ presence_penalty: -2 }, { frequency_penalty: 2 }, { presence_penalty: 0.5, frequency_penalty: -1.5 }, { repetition_penalty: 1.1 }, { repetition_penalty: 3 }]) {
      expect((await chat(extra)).status).toBe(200);
    }
  });

  it('refuses n below 1 in its words, and checks it first', async () => {
    expect(await chat({ n: 0 })).toEqual({ status: 400, body: samplingParamsError('n must be at least 1, got 0.', null) });
    expect(await completion({ n: -2, temperature: -1 })).toEqual({ status: 400, body: samplingParamsError('n must be at least 1, got -2.', null) });
    expect((await chat({ n: 1 })).status).toBe(200);
    expect((await chat({ n: null })).status).toBe(200);
  });

  it('refuses an empty stop string, alone or in a list, after the other checks', async () => {
    const refused = samplingParamsError('stop cannot contain an empty string.', null);
    expect(await chat({ stop: '' })).toEqual({ status: 400, body: refused });
    expect(await completion({ stop: ['Hello', ''] })).toEqual({ status: 400, body: refused });
    expect((await chat({ stop: [''], min_tokens: -1 })).body.error.message).toBe('min_tokens must be greater than or equal to 0, got -1.');
    expect((await chat({ stop: [] })).status).toBe(200);
  });

  it('checks the penalties before temperature, as SamplingParams does', async () => {
    expect((await chat({ temperature: -1, presence_penalty: 9 })).body.error.message).toBe('presence_penalty must be in [-2, 2], got 9.0.');
  });

  it('takes an integer seed and refuses any other, as pydantic types it', async () => {
    expect((await chat({ seed: 42 })).status).toBe(200);
    expect((await chat({ seed: null })).status).toBe(200);
    // A 64-bit seed, within vLLM's int64 bound (2^63 - 1 reads as 2^63 in a double).
    expect((await chat({ seed: 2 ** 62 })).status).toBe(200);
    expect((await chat({ seed: 2 ** 63 })).status).toBe(200);
    for (const seed of ['abc', 1.5, 2 ** 64]) {
      const { status, body } = await chat({ seed });
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ type: 'Bad Request', param: 'body.seed' });
    }
  });

  it('checks in vLLM\'s order: the model first, then temperature before max_tokens; the same on /v1/completions', async () => {
    expect((await chat({ model: 'nope', temperature: -1 })).status).toBe(404);
    expect((await chat({ temperature: -1, max_tokens: -1 })).body.error.param).toBe('temperature');
    expect(await completion({ temperature: -2, top_p: 0 })).toEqual({ status: 400, body: samplingParamsError('temperature must be non-negative, got -2.0.', 'temperature') });
  });
});

describe('response_format', () => {
  it("takes vLLM's four types (not applied: the reply is scripted) and refuses any other, in pydantic's words", async () => {
    for (const type of ['text', 'json_object', 'json_schema', 'structural_tag']) {
      expect((await chat({ response_format: { type, json_schema: { name: 'x', schema: {} } } })).status).toBe(200);
    }
    expect((await completion({ response_format: { type: 'json_object' } })).status).toBe(200);
    for (const send of [chat, completion]) {
      const { status, body } = await send({ response_format: { type: 'xml' } });
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ type: 'Bad Request', param: 'body.response_format.type' });
      // Quoted as Python's repr() quotes a string holding single quotes.
      expect(body.error.message).toBe(
        `1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "Input should be 'text', 'json_object', 'json_schema' or 'structural_tag'"}`,
      );
    }
    expect((await chat({ response_format: {} })).body.error.message).toContain('Field required');
  });
});

describe('pyFloat', () => {
  it("writes numbers as Python's repr() writes floats", () => {
    const cases: Array<[number, string]> = [
      [-1, '-1.0'], [0, '0.0'], [-0, '-0.0'], [-0.5, '-0.5'], [0.1, '0.1'], [123.456, '123.456'],
      [0.0001, '0.0001'], [1e-5, '1e-05'], [-1.5e-7, '-1.5e-07'], [1e15, '1000000000000000.0'], [1.5e16, '1.5e+16'], [1e300, '1e+300'],
    ];
    for (const [n, repr] of cases) expect(pyFloat(n)).toBe(repr);
  });
});
