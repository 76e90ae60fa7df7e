import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();

// Pass-through reads no call from the text, but `validate_tool_arguments` still checks the calls an
// upstream parser sends as delta.tool_calls: the client asked for it, and such a call is its own.
describe('validate_tool_arguments with tool_parser "none"', () => {
  it('refuses an upstream-parsed call that breaks the schema and passes on the model\'s next, valid one', async () => {
    const gw = await scripted.start((_req, res) => {
      sseHeaders(res);
      const args = scripted.upstream.requests.length === 1 ? '{"q": 5}' : '{"q": "x"}';
      const call = { tool_calls: [{ index: 0, id: 'chatcmpl-tool-1', type: 'function', function: { name: 'lookup', arguments: args } }] };
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk(call), vllmChunk({}, 'tool_calls'), DONE].join(''));
    });
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } }];
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, tool_parser: 'none', validate_tool_arguments: true, tools, messages: [{ role: 'user', content: 'look x up' }] });
    expect(res.status).toBe(200);
    expect(scripted.upstream.requests.length).toBe(2);
    // The second round's prompt carries the refusal the model heard.
    const resent = (scripted.upstream.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    expect(resent.at(-1)).toMatchObject({ role: 'tool' });
    expect(String(resent.at(-1)!.content)).toMatch(/argument "q" of lookup/);
    expect(res.json.conveyor.rounds).toBe(2);
    expect(res.json.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { tool_calls: [{ function: { name: 'lookup', arguments: '{"q": "x"}' } }] } });
  });
});
