import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { undeclaredToolCheck } from '../../gateway/undeclared-tools.ts';
import { MODEL } from '../llm-client/fixtures/vllm-streams.ts';
import { answeringTool, callThenAnswer, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const calculator = answeringTool('calculator', () => '5');
const weatherTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
/** A model that calls get_weather until it hears back, then answers with what it heard. */
const callsWeather = callThenAnswer({ name: 'get_weather', arguments: { city: 'Paris' } }, (o) => `heard: ${o}`);

describe('undeclaredToolCheck', () => {
  it('refuses a name neither the gateway nor the request offers, and lists those it does', () => {
    const check = undeclaredToolCheck([{ type: 'function', function: { name: 'lookup' } }], toolMap(calculator))!;
    expect(check('lookup')).toBeUndefined();
    expect(check('calculator')).toBeUndefined();
    expect(check('get_weather')).toBe('there is no tool named "get_weather" in this request (its tools are calculator, lookup)');
    expect(undeclaredToolCheck(undefined, new Map())!('x')).toBe('there is no tool named "x" in this request (it has none)');
    // Another type of tool names itself in ways not read here: any call may be the client's.
    expect(undeclaredToolCheck([{ type: 'custom' }], new Map())).toBeUndefined();
  });
});

describe('a call to a tool the request does not have', () => {
  it('never reaches the client: the gateway refuses it as it is decoded, and the model answers again', async () => {
    const gw = await scripted.start(callsWeather, { tools: toolMap(calculator) });
    const answer = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'weather in paris' }] });
    expect(answer.status).toBe(200);
    const choice = answer.json.choices[0];
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.tool_calls).toBeUndefined();
    expect(choice.message.content).toBe('heard: error: there is no tool named "get_weather" in this request (its tools are calculator)');
    // The refused call and its answer are in the turns the response adds, as any tool round's.
    const [call, observation] = answer.json.conveyor.messages;
    expect(call.tool_calls[0].function.name).toBe('get_weather');
    expect(observation).toMatchObject({ role: 'tool', tool_call_id: call.tool_calls[0].id });
    // The model heard it in the next round.
    expect(scripted.upstream.requests).toHaveLength(2);
  });

  it('fails the request with tool_rejected under on_tool_reject "error", naming the tool the model made up', async () => {
    const gw = await scripted.start(callsWeather, { tools: toolMap(calculator) });
    const refused = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, on_tool_reject: 'error', messages: [{ role: 'user', content: 'weather in paris' }] });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe('tool_rejected');
    expect(refused.json.error.message).toBe('the model called a tool this request does not have: there is no tool named "get_weather" in this request (its tools are calculator)');
  });

  it('is the client\'s once the request declares it: streamed as tool_calls, every chunk with its choice', async () => {
    const gw = await scripted.start(callsWeather, { tools: toolMap(calculator) });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: MODEL, stream: true, tools: [weatherTool as OpenAI.ChatCompletionTool], messages: [{ role: 'user', content: 'weather in paris' }] });
    let args = '';
    let name: string | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      // A loop as OpenAI's examples write it: it reads choices[0] of every chunk.
      const choice = chunk.choices[0]!;
      for (const call of choice.delta.tool_calls ?? []) {
        name ??= call.function?.name;
        args += call.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'Paris' });
    expect(finish).toBe('tool_calls');
    expect(scripted.upstream.requests).toHaveLength(1);
  });
});
