import { describe, expect, it } from 'vitest';
import { DONE, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

type Body = { messages: Array<{ role: string }>; continue_final_message?: boolean; add_generation_prompt?: boolean };
type EchoBody = { messages: Array<{ role: string; content?: string }>; echo?: boolean };

/** The client's prefill request: the assistant's start "I will", to be continued. */
function postPrefill(url: string, extra: Record<string, unknown> = {}) {
  return postJson(url, '/v1/chat/completions', {
    model: 'Qwen/Qwen2.5-7B-Instruct',
    messages: [
      { role: 'user', content: 'When is high tide?' },
      { role: 'assistant', content: 'I will' },
    ],
    continue_final_message: true,
    add_generation_prompt: false,
    ...extra,
  });
}

/**
 * vLLM's prefill: a request whose last message is the assistant's start, with
 * `continue_final_message: true` and `add_generation_prompt: false`, has the model go on writing
 * that message. It holds for the client's own turn only: round 2's prompt ends with the tool's
 * result, which the template would cut the prompt after (Hugging Face's templates), or refuse as
 * a final message to continue (mistral_common's 400), instead of opening the assistant's reply.
 */
describe("vLLM's continue_final_message across tool rounds", () => {
  const scripted = scriptedGateway();

  it("continues the client's message in round 1 and opens a new reply after the tool's result", async () => {
    const gateway = await scripted.start(
      (_req, res, body) => {
        const answered = (body as Body).messages.at(-1)!.role === 'tool';
        const deltas = answered ? ['High tide is at 06:12.'] : [' look it up.<tool_call>\n{"name": "lookup", "arguments": {"q": "tides"}}\n</tool_call>'];
        sseHeaders(res);
        res.end([vllmChunk({ role: 'assistant', content: '' }), ...deltas.map((content) => vllmChunk({ content })), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      },
      { tools: toolMap(answeringTool('lookup', () => 'high tide at 06:12')) },
    );
    const res = await postPrefill(gateway.url);
    expect(res.status).toBe(200);
    expect(res.json.conveyor.rounds).toBe(2);
    const [round1, round2] = scripted.upstream.requests.map((r) => r.body as Body);
    expect(round1).toMatchObject({ continue_final_message: true, add_generation_prompt: false });
    expect(round2!.messages.at(-1)!.role).toBe('tool');
    expect(round2).toMatchObject({ continue_final_message: false, add_generation_prompt: true });
    // The client's start and round 1's continuation are one assistant turn, as the model wrote it.
    expect(round2!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(round2!.messages[1]).toMatchObject({ role: 'assistant', content: 'I will look it up.', tool_calls: [{ type: 'function', function: { name: 'lookup', arguments: '{"q":"tides"}' } }] });
  });
});

/**
 * vLLM's `echo: true` with the prefill puts the client's start before the continuation: round 1's
 * text already holds it. Joined to the client's start again, round 2's prompt read "I willI will
 * look it up.", a turn no model wrote; the client's answer starts with the start once, as vLLM's.
 */
describe("vLLM's echo with continue_final_message across tool rounds", () => {
  const scripted = scriptedGateway();

  it("has the client's start once in round 2's prompt and once in the answer", async () => {
    const gateway = await scripted.start(
      (_req, res, body) => {
        const { messages, echo } = body as EchoBody;
        const last = messages.at(-1)!;
        const answered = last.role === 'tool';
        // As vLLM's serving_chat: the echo is the last message's content when it has the reply's role.
        const echoed = echo === true && last.role === 'assistant' ? [last.content!] : [];
        const deltas = answered ? ['High tide is at 06:12.'] : [' look it up.<tool_call>\n{"name": "lookup", "arguments": {"q": "tides"}}\n</tool_call>'];
        sseHeaders(res);
        res.end([vllmChunk({ role: 'assistant', content: '' }), ...[...echoed, ...deltas].map((content) => vllmChunk({ content })), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      },
      { tools: toolMap(answeringTool('lookup', () => 'high tide at 06:12')) },
    );
    const res = await postPrefill(gateway.url, { echo: true });
    expect(res.status).toBe(200);
    const round2 = scripted.upstream.requests[1]!.body as EchoBody;
    expect(round2.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(round2.messages[1]!.content).toBe('I will look it up.');
    expect(res.json.choices[0].message.content).toBe('I will look it up.\n\nHigh tide is at 06:12.');
    // The turns the gateway ran hold what the model wrote, the continuation, as without echo.
    expect(res.json.conveyor.messages[0]).toMatchObject({ role: 'assistant', content: ' look it up.' });
  });
});
