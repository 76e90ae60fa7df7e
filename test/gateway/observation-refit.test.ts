import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { DONE, MODEL, vllmChunk, vllmUsage } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { getJson, postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();
type Messages = Array<{ role: string; content: string | null }>;

const CONTEXT = 12_000;
const USER = '1'.repeat(4_000);

/**
 * A tokenizer the gateway's estimate cannot know: the client's digits one token a byte, the
 * tools' prose four bytes a token. The prompt's average (about 2 bytes a token) makes the
 * gateway's first cut of the results free too little, and the round is refused a second time.
 */
function inputTokens(messages: Messages): number {
  const bytes = (role: string) => messages.filter((m) => m.role === role).reduce((sum, m) => sum + Buffer.byteLength(m.content ?? ''), 0);
  return bytes('user') + Math.ceil(bytes('tool') / 4);
}

function refuse(res: ServerResponse, message: string): void {
  res.writeHead(400, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'BadRequestError', param: null, code: 400 } }));
}

describe('a later round refused twice for its length', () => {
  it('cuts the results again from what the first cut left, so the second fit frees what the second refusal asks', async () => {
    const gw = await scripted.start(
      (_req, res, body) => {
        const { messages, max_tokens: maxTokens } = body as { messages: Messages; max_tokens: number };
        if (!messages.some((m) => m.role === 'tool')) {
          sseHeaders(res);
          const calls = '<tool_call>\n{"name": "dump", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "dump", "arguments": {}}\n</tool_call>';
          return void res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: calls }), vllmChunk({}, 'stop'), vllmUsage(1000, 2), DONE].join(''));
        }
        const input = inputTokens(messages);
        if (input >= CONTEXT) return refuse(res, `This model's maximum context length is ${CONTEXT} tokens. However, your request has ${input} input tokens. Please reduce the length of the input messages.`);
        if (input + maxTokens > CONTEXT) return refuse(res, `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${CONTEXT} tokens and your request has ${input} input tokens (${maxTokens} > ${CONTEXT} - ${input}).`);
        sseHeaders(res);
        res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'read both' }), vllmChunk({}, 'stop'), vllmUsage(input, 2), DONE].join(''));
      },
      { tools: toolMap(answeringTool('dump', () => 'p'.repeat(20_000))) },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, max_tokens: 12, messages: [{ role: 'user', content: USER }] });
    expect(res.status, JSON.stringify(res.json.error)).toBe(200);
    expect(res.json.choices[0].message.content.trim()).toBe('read both');
    const round2 = scripted.upstream.requests.slice(1).map((r) => inputTokens((r.body as { messages: Messages }).messages));
    // Sent whole, then cut twice, each cut shorter than the last (then, the prompt fitting, asked for what max_tokens the context leaves).
    expect(round2[0]! > round2[1]! && round2[1]! > round2[2]!).toBe(true);
    expect(round2.at(-1)).toBeLessThan(CONTEXT);
    const timeline = await getJson(gw.url, `/v1/requests/${res.headers.get('x-conveyor-request-id')}/timeline`);
    const fits = (timeline.json.events as TimelineEvent[]).filter((e) => e.type === 'error').map((e) => e.detail);
    expect(fits.slice(0, 2)).toEqual([expect.stringMatching(/results were cut to \d+ bytes each/), expect.stringMatching(/results were cut to \d+ bytes each/)]);
  });
});
