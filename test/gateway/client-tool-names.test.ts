import { describe, expect, it } from 'vitest';
import { MODEL } from '../llm-client/fixtures/vllm-streams.ts';
import { answeringTool, callThenAnswer, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();

describe('a client tool under a gateway tool\'s name', () => {
  it('is the client\'s when the client describes it itself, and the gateway\'s when named alone', async () => {
    let ran = 0;
    const calculator = answeringTool('calculator', () => String(++ran));
    const gw = await scripted.start(callThenAnswer({ name: 'calculator', arguments: { a: 2, b: 3 } }, (o) => `gateway says ${o}`), { tools: toolMap(calculator) });
    const ask = (tool: Record<string, unknown>) => postJson(gw.url, '/v1/chat/completions', { model: MODEL, tools: [{ type: 'function', function: tool }], messages: [{ role: 'user', content: 'add' }] });

    const own = await ask({ name: 'calculator', description: 'my adder', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } });
    expect(own.json.choices[0].finish_reason).toBe('tool_calls');
    expect(own.json.choices[0].message.tool_calls[0].function).toEqual({ name: 'calculator', arguments: '{"a":2,"b":3}' });
    expect(ran).toBe(0);
    // What went upstream is the client's contract, untouched.
    expect((scripted.upstream.requests[0]!.body as { tools: unknown[] }).tools).toEqual([{ type: 'function', function: { name: 'calculator', description: 'my adder', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } } }]);

    const named = await ask({ name: 'calculator' });
    expect(named.json.choices[0].message.content).toBe('gateway says 1');
    expect(ran).toBe(1);
  });
});

describe('a gateway tool listed by name with its other fields null', () => {
  it('is the gateway\'s, as when they are left out (clients that serialise every field send null)', async () => {
    let ran = 0;
    const calculator = answeringTool('calculator', () => String(++ran));
    const gw = await scripted.start(callThenAnswer({ name: 'calculator', arguments: { a: 2, b: 3 } }, (o) => `gateway says ${o}`), { tools: toolMap(calculator) });
    const answer = await postJson(gw.url, '/v1/chat/completions', {
      model: MODEL,
      tools: [{ type: 'function', function: { name: 'calculator', description: null, parameters: null, strict: null } }],
      messages: [{ role: 'user', content: 'add' }],
    });
    expect(answer.json.choices[0].finish_reason).toBe('stop');
    expect(answer.json.choices[0].message.content).toBe('gateway says 1');
    expect(ran).toBe(1);
    // The model was given the plugin's contract, its description included, and no null in its place.
    const sent = (scripted.upstream.requests[0]!.body as { tools: Array<{ function: Record<string, unknown> }> }).tools[0]!.function;
    expect(sent.parameters).toEqual(calculator.parameters);
    expect(sent.description).toBe(calculator.description);
    expect(sent).not.toHaveProperty('strict');
  });
});
