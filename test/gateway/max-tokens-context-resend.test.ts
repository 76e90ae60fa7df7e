import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { GatewayHandle } from '../../gateway/server.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const note = answeringTool('note', () => 'noted');

const CALL = '<tool_call>\n{"name": "note", "arguments": {"text": "x"}}\n</tool_call>';
const ASK = { model: MODEL, messages: [{ role: 'user', content: 'take a note, then say done' }] };

/** vLLM >= 0.9's refusal of a max_tokens the prompt leaves no room for. */
const tooLarge = (requested: number, context: number, input: number) =>
  `'max_tokens' or 'max_completion_tokens' is too large: ${requested}. This model's maximum context length is ${context} tokens and your request has ${input} input tokens (${requested} > ${context} - ${input}).`;
/** Older vLLM's (and OpenAI's until 2024) wording of the same. */
const tooLargeOld = (requested: number, context: number, input: number) =>
  `This model's maximum context length is ${context} tokens. However, you requested ${requested + input} tokens (${input} in the messages, ${requested} in the completion). Please reduce the length of the messages or completion.`;
/** vLLM's refusal of a prompt that alone is longer than the context. */
const promptTooLong = (context: number, input: number) =>
  `This model's maximum context length is ${context} tokens. However, your request has ${input} input tokens. Please reduce the length of the input messages.`;

function refuse(res: ServerResponse, message: string, param: string | null = null): void {
  res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type: 'BadRequestError', param, code: 400 } }));
}

/** A decode of `content` with vLLM's usage chunk (30 completion tokens). */
function answer(res: ServerResponse, content: string): void {
  sseHeaders(res);
  const usage = `data: ${JSON.stringify({ id: 'u', object: 'chat.completion.chunk', created: 0, model: MODEL, choices: [], usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: 40 } })}\n\n`;
  res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), usage, DONE].join(''));
}

/**
 * A model that calls `note` in round 1 and answers "done" in round 2, behind an upstream whose
 * context the prompt of round 2 has grown into: `refusals` are its answers to the first requests
 * of round 2, in order (a request with a tool result in it).
 */
function gatewayOverFullContext(refusals: Array<(res: ServerResponse) => void>): Promise<GatewayHandle> {
  let refused = 0;
  return scripted.start(
    (_req, res, body) => {
      const hasResult = (body as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool');
      if (!hasResult) return answer(res, CALL);
      const refusal = refusals[refused++];
      if (refusal) return refusal(res);
      answer(res, 'done');
    },
    { tools: toolMap(note) },
  );
}

const sent = (field: string) => scripted.upstream.requests.map((r) => (r.body as Record<string, unknown>)[field]);

describe('a max_tokens that the context no longer has room for in a later round', () => {
  it.each([
    ['max_tokens', 'vLLM >= 0.9', tooLarge],
    ['max_completion_tokens', 'vLLM >= 0.9', tooLarge],
    ['max_tokens', 'older vLLM', tooLargeOld],
  ])('sends round 2 once more with what the context leaves (%s, %s wording)', async (field, _wording, words) => {
    const gw = await gatewayOverFullContext([(res) => refuse(res, words(970, 1024, 624), 'max_tokens')]);
    const res = await postJson(gw.url, '/v1/chat/completions', { ...ASK, [field]: 1000 });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(sent(field)).toEqual([1000, 970, 400]);
    expect(res.json.choices[0]).toMatchObject({ message: { content: 'done' }, finish_reason: 'stop' });
    expect(res.json.conveyor).toMatchObject({ rounds: 2, stop_reason: 'answer' });
    // The timeline says why round 2 went out twice.
    const timeline = await getJson(gw.url, `/v1/requests/${res.headers.get('x-conveyor-request-id')}/timeline`);
    const marks = (timeline.json.events as Array<{ type: string; round?: number; detail?: string }>).filter((e) => e.type === 'error');
    expect(marks).toEqual([expect.objectContaining({ round: 2, detail: expect.stringContaining('sent again with 400') })]);
  });

  it('streams the answer with one round.started per round and no error chunk', async () => {
    const gw = await gatewayOverFullContext([(res) => refuse(res, tooLarge(970, 1024, 624))]);
    const streamed = await streamChat(gw.url, { ...ASK, max_tokens: 1000 });
    expect(streamed.chunks.filter((c) => c.error)).toEqual([]);
    expect(streamed.content).toContain('done');
    expect(streamed.events.filter((e) => e.type === 'round.started').map((e) => e.round)).toEqual([1, 2]);
    expect(sent('max_tokens')).toEqual([1000, 970, 400]);
  });

  it('sends a round again only once: a second refusal goes to the client, saying which round', async () => {
    const again = (res: ServerResponse) => refuse(res, tooLarge(400, 1024, 700), 'max_tokens');
    const gw = await gatewayOverFullContext([(res) => refuse(res, tooLarge(970, 1024, 624), 'max_tokens'), again]);
    const res = await postJson(gw.url, '/v1/chat/completions', { ...ASK, max_tokens: 1000 });
    expect(sent('max_tokens')).toEqual([1000, 970, 400]);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ param: 'max_tokens', code: 'upstream_response_error' });
    expect(res.json.error.message).toMatch(/^round 2 of this request, .* was refused by the upstream: 'max_tokens' or 'max_completion_tokens' is too large: 400\./);
  });

  it('does not send round 2 again when its prompt alone no longer fits: the client gets context_length_exceeded', async () => {
    const gw = await gatewayOverFullContext([(res) => refuse(res, promptTooLong(1024, 1100), 'messages')]);
    const res = await postJson(gw.url, '/v1/chat/completions', { ...ASK, max_tokens: 1000 });
    expect(sent('max_tokens')).toEqual([1000, 970]);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' });
    expect(res.json.error.message).toContain('round 2 of this request');
    expect(res.json.error.message).toContain('However, your request has 1100 input tokens');
  });

  it("gives the older wording's prompt that no longer fits context_length_exceeded too, unsent again", async () => {
    const gw = await gatewayOverFullContext([(res) => refuse(res, tooLargeOld(970, 1024, 1030))]);
    const res = await postJson(gw.url, '/v1/chat/completions', { ...ASK, max_tokens: 1000 });
    expect(sent('max_tokens')).toEqual([1000, 970]);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ param: 'messages', code: 'context_length_exceeded' });
  });

  it("refuses round 1's too-large max_tokens as vLLM does: it is the client's own request", async () => {
    const gw = await scripted.start((_req, res) => refuse(res, tooLarge(5000, 4096, 20), 'max_tokens'), { tools: toolMap(note) });
    const res = await postJson(gw.url, '/v1/chat/completions', { ...ASK, max_tokens: 5000 });
    expect(sent('max_tokens')).toEqual([5000]);
    expect(res.status).toBe(400);
    expect(res.json.error).toEqual({ message: tooLarge(5000, 4096, 20), type: 'invalid_request_error', param: 'max_tokens', code: 'upstream_response_error' });
  });
});
