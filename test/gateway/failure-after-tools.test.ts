import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

// A request that fails once its tools have started is not the client's to send again blindly:
// the error it reads names the tools that ran (the SDKs get `x-should-retry: false`).
const scripted = scriptedGateway();
const ask = (extra: Record<string, unknown> = {}) => ({ model: MODEL, tools: [{ type: 'function', function: { name: 'echo' } }], messages: [{ role: 'user', content: 'say hi twice' }], ...extra });
const CALL = '<tool_call>\n{"name": "echo", "arguments": {"text": "hi"}}\n</tool_call>';
const engineDead = (res: ServerResponse) => void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"engine dead","type":"InternalServerError","code":500}}');

/** Round 1 calls `echo` twice; every later round gets `later`. */
function twoCallsThen(later: (res: ServerResponse) => void) {
  return (_req: unknown, res: ServerResponse, body: unknown) => {
    if ((body as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool')) return later(res);
    sseHeaders(res);
    res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: `${CALL}\n${CALL}` }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
  };
}

describe("a request whose upstream fails after the request's tools started", () => {
  const note = "(in round 2, after this request's tools started (echo ×2); sent again, it runs them again)";

  it('names them in the error of a non-streamed answer', async () => {
    const gw = await scripted.start(twoCallsThen(engineDead), { tools: toolMap(answeringTool('echo', () => 'hi')) });
    const res = await postJson(gw.url, '/v1/chat/completions', ask());
    expect(res.status).toBe(502);
    expect(res.json.error).toMatchObject({ message: `engine dead ${note}`, type: 'server_error', code: 'upstream_response_error' });
  });

  it("names them in a stream's error chunk", async () => {
    const gw = await scripted.start(twoCallsThen(engineDead), { tools: toolMap(answeringTool('echo', () => 'hi')) });
    const streamed = await streamChat(gw.url, ask({ stream: true }));
    expect(streamed.chunks.filter((c) => c.error).map((c) => c.error!.message)).toEqual([`engine dead ${note}`]);
  });

  it('names a tool that started while round 1 was decoding (partial execution)', async () => {
    let started!: () => void;
    const toolStarted = new Promise<void>((resolve) => (started = resolve));
    const echo = answeringTool('echo', () => 'hi');
    const signalling: ToolPlugin = { ...echo, start: (ctx) => (started(), echo.start(ctx)) };
    const gw = await scripted.start(
      async (_req, res) => {
        sseHeaders(res);
        res.write(vllmChunk({ role: 'assistant', content: '' }) + vllmChunk({ content: CALL }));
        await toolStarted;
        res.destroy();
      },
      { tools: toolMap(signalling) },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', ask());
    expect(res.status).toBe(502);
    expect(res.json.error.message).toMatch(/ \(after this request's tools started \(echo\); sent again, it runs them again\)$/);
  });

  it('adds nothing when no tool had started', async () => {
    const gw = await scripted.start((_req, res) => engineDead(res), { tools: toolMap(answeringTool('echo', () => 'hi')) });
    const res = await postJson(gw.url, '/v1/chat/completions', ask());
    expect(res.status).toBe(502);
    expect(res.json.error.message).toBe('engine dead');
  });
});

// The upstream's refusal of round 2's prompt already says it was the grown prompt.
describe("round 2's prompt refused (400)", () => {
  it('says so once, without a second note', async () => {
    const refuse = (res: ServerResponse) => void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"too long","type":"BadRequestError","code":400}}');
    const gw = await scripted.start(twoCallsThen(refuse), { tools: toolMap(answeringTool('echo', () => 'hi')) });
    const res = await postJson(gw.url, '/v1/chat/completions', ask());
    expect(res.status).toBe(400);
    expect(res.json.error.message).toBe('round 2 of this request, whose prompt is your messages plus the tool calls and results of round 1, was refused by the upstream: too long');
  });
});
