import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();

const CALL = '<tool_call>\n<function=count>\n<parameter=n>\n5\n</parameter>\n</function>\n</tool_call>';

// Regression: the request's whole `tools` went to the Qwen3-Coder parser, whose parameter types
// are read from function tools only and which refused any other: a request listing one of
// OpenAI's `custom` tools (which the gateway passes to the upstream) was refused 400 as "invalid
// qwen3-coder parser options", its `param` a field of the parser's ("toolDefinitions.0.type")
// that no request has.
describe('a request that lists a tool of another type than function', () => {
  it('is answered in the Qwen3-Coder format, its function tools still typing the call’s arguments', async () => {
    const gw = await scripted.start((_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: CALL }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    });
    const tools = [
      { type: 'custom', custom: { name: 'grammar_tool', description: 'free-form input' } },
      { type: 'function', function: { name: 'count', parameters: { type: 'object', properties: { n: { type: 'integer' } } } } },
    ];
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, tool_parser: 'qwen3_coder', tools, messages: [{ role: 'user', content: 'count to 5' }] });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.choices[0].finish_reason).toBe('tool_calls');
    expect(res.json.choices[0].message.tool_calls.map((c: { function: unknown }) => c.function)).toEqual([{ name: 'count', arguments: '{"n":5}' }]);
    // The custom tool is the upstream's to read, as sent.
    expect((scripted.upstream.requests[0]!.body as { tools: unknown }).tools).toEqual(tools);
  });
});
