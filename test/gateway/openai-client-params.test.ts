import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';

/** The `openai` package, as an application uses it, against the gateway and its simulator on loopback. */
describe('OpenAI request fields and response fields through the openai client', () => {
  let conveyor: ConveyorHandle;
  let client: OpenAI;
  beforeAll(async () => {
    conveyor = await startTestConveyor({
      sim: {
        scenarios: [
          {
            // A tool round that outlasts a second, so that a response's end is in a later second than its request.
            name: 'slow-python',
            rules: [
              { when: { explicit: true, round: 1, lastRole: 'user' }, reply: ['```python', 'import time', 'time.sleep(1.2)', "print('slept')", '```'] },
              { when: { explicit: true, lastRole: 'tool' }, reply: 'It said {{tool_output}}.' },
            ],
          },
          {
            name: 'calc-and-weather',
            rules: [
              { when: { explicit: true, round: 1, lastRole: 'user' }, reply: '[TOOL_CALLS][{"name": "calculator", "arguments": {"expression": "200*701"}}, {"name": "get_weather", "arguments": {"city": "Oslo"}}]' },
              { when: { explicit: true, lastRole: 'tool' }, reply: 'Done: {{tool_output}}.' },
            ],
          },
          { name: 'weather', rules: [{ when: { explicit: true, round: 1, lastRole: 'user' }, reply: '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]' }] },
        ],
      },
    });
    client = new OpenAI({ baseURL: `${conveyor.gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  const ask = (content: string) => [{ role: 'user' as const, content }];
  const arrivedAt = async (id: string): Promise<number> => {
    const timeline = (await (await fetch(`${conveyor.gateway.url}/v1/requests/${id}/timeline`)).json()) as { started_at: string };
    return Math.floor(Date.parse(timeline.started_at) / 1000);
  };

  it('dates a response at its request’s arrival (`created`), not at the end of its tool rounds, streamed or not', async () => {
    const request = { model: SIM_MODEL, scenario: 'slow-python', messages: ask('Sleep a little in Python.') } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const whole = await client.chat.completions.create(request);
    expect(whole.choices[0]!.message.content).toContain('It said slept');
    expect(whole.created).toBe(await arrivedAt(whole.id));

    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) chunks.push(chunk);
    expect(new Set(chunks.map((c) => c.created))).toEqual(new Set([await arrivedAt(chunks[0]!.id)]));
  });

  it('refuses top_logprobs in its own words, as it refuses logprobs, and takes top_logprobs: 0', async () => {
    const refused = client.chat.completions.create({ model: SIM_MODEL, messages: ask('hi'), top_logprobs: 2 });
    await expect(refused).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const error = (await refused.catch((err: unknown) => err)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error.error).toEqual({ message: expect.stringMatching(/^top_logprobs: .*needs logprobs/), type: 'invalid_request_error', param: 'top_logprobs', code: 'invalid_request' });

    const none = await client.chat.completions.create({ model: SIM_MODEL, messages: ask('hi'), top_logprobs: 0 });
    expect(none.choices[0]!.finish_reason).toBe('stop');
  });

  it("refuses vLLM's return_token_ids: true, which the re-framed answer cannot honour, and takes false", async () => {
    const refused = client.chat.completions.create({ model: SIM_MODEL, messages: ask('hi'), return_token_ids: true } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const error = (await refused.catch((err: unknown) => err)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ param: 'return_token_ids', code: 'invalid_request', message: expect.stringMatching(/^return_token_ids: .*not supported/) });
    const plain = await client.chat.completions.create({ model: SIM_MODEL, messages: ask('hi'), return_token_ids: false } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(plain.choices[0]!.finish_reason).toBe('stop');
  });

  it('writes a non-streamed answer with the fields vLLM gives it: system_fingerprint and service_tier null, the message with refusal null', async () => {
    const whole = await client.chat.completions.create({ model: SIM_MODEL, messages: ask('hi') });
    expect(whole).toMatchObject({ object: 'chat.completion', system_fingerprint: null, service_tier: null });
    expect(Object.keys(whole).slice(0, 6)).toEqual(['id', 'object', 'created', 'model', 'system_fingerprint', 'service_tier']);
    expect(whole.choices[0]!.message).toMatchObject({ role: 'assistant', refusal: null });
  });

  it('streams a client call as OpenAI does: one id for the response, role on the first chunk only, the call’s id, type and name on its first delta', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    const request = { model: SIM_MODEL, scenario: 'weather', messages: ask('Weather in Paris?'), tools, stream: true, stream_options: { include_usage: true } };
    for await (const chunk of await client.chat.completions.create(request as OpenAI.ChatCompletionCreateParamsStreaming)) chunks.push(chunk);

    expect(new Set(chunks.map((c) => `${c.id} ${c.object} ${c.created} ${c.model}`)).size).toBe(1);
    expect(chunks.map((c) => c.choices[0]?.delta.role)).toEqual(['assistant', ...chunks.slice(1).map(() => undefined)]);
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toEqual({ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(deltas.slice(1).every((d) => d.index === 0 && d.id === undefined && d.type === undefined && d.function?.name === undefined)).toBe(true);
    expect(deltas.map((d) => d.function?.arguments).join('')).toBe('{"city": "Paris"}');
    expect(chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(['tool_calls']);
    // The usage chunk comes last, after the finish chunk; every chunk before it says "usage": null.
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: expect.any(Number) } });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('runs a runTools loop whose model also called a gateway tool, the follow-up answered from the client’s result', async () => {
    const calls: unknown[] = [];
    const runner = client.chat.completions.runTools({
      model: SIM_MODEL,
      messages: ask('What is 200*701, and the weather in Oslo?'),
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, parse: JSON.parse, function: (args: unknown) => (calls.push(args), 'sunny') } }],
      // The scripted model: the calculator (the gateway's) and get_weather (the client's) in one turn, then an answer.
      ...({ scenario: 'calc-and-weather' } as object),
    });
    await expect(runner.finalContent()).resolves.toBe('Done: sunny.');
    expect(calls).toEqual([{ city: 'Oslo' }]);
    expect(runner.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });
});
