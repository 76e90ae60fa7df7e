import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { allSseData, fixedReplyScenario, postChat, streamedText } from './sim-test-helpers.ts';

// Regression: the simulator ignored chat `echo`, so a client continuing an assistant prefix read
// back the continuation alone where vLLM returns the prefix and the continuation (serving_chat).
const REPLY = ' the answer is 42.';
const prefixed = [
  { role: 'user', content: 'What is the answer?' },
  { role: 'assistant', content: 'Well,' },
];
const continuation = { messages: prefixed, echo: true, continue_final_message: true, add_generation_prompt: false };

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('answer', REPLY)] });
});
afterAll(() => sim.close());

async function wholeContent(body: object): Promise<string | null> {
  const res = await postChat(sim.url, body);
  expect(res.status).toBe(200);
  const json = (await res.json()) as { choices: Array<{ message: { content: string | null } }> };
  return json.choices[0]!.message.content;
}

describe('chat echo, as vLLM serves it', () => {
  it('prefixes a whole response with the last message when it has the response role', async () => {
    expect(await wholeContent(continuation)).toBe(`Well,${REPLY}`);
    // echo off (the default): the continuation alone.
    expect(await wholeContent({ ...continuation, echo: false })).toBe(REPLY);
  });

  it('echoes nothing when the last message is not the role the response takes', async () => {
    // add_generation_prompt (default true) answers as "assistant": a last user message is not echoed.
    expect(await wholeContent({ messages: [{ role: 'user', content: 'What is the answer?' }], echo: true })).toBe(REPLY);
    // Without a generation prompt the response takes the last message's role, so it is echoed.
    const asUser = { messages: [{ role: 'user', content: [{ type: 'text', text: 'What is' }, { type: 'text', text: 'the answer?' }] }], echo: 'true', add_generation_prompt: false };
    expect(await wholeContent(asUser)).toBe(`What is\nthe answer?${REPLY}`);
  });

  it('streams the echo as one chunk after the role chunk, with no token_ids, usage counting no tokens', async () => {
    const body = { ...continuation, stream: true, stream_options: { include_usage: true, continuous_usage_stats: true } };
    const payloads = await allSseData(await postChat(sim.url, body));
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as { choices: Array<Record<string, unknown>>; usage?: { completion_tokens: number } });
    expect(chunks[0]!.choices[0]!['delta']).toEqual({ role: 'assistant', content: '' });
    expect(payloads[1]).toMatch(/"choices":\[\{"index":0,"delta":\{"content":"Well,"\},"logprobs":null,"finish_reason":null\}\],"usage":\{"prompt_tokens":\d+,"total_tokens":\d+,"completion_tokens":0\}\}$/);
    expect(chunks[2]!.choices[0]!['token_ids']).toBeNull();
    expect(streamedText(payloads)).toBe(`Well,${REPLY}`);
  });

  it('refuses a non-boolean echo as pydantic does', async () => {
    const res = await postChat(sim.url, { ...continuation, echo: 'maybe' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain("'bool_parsing', 'loc': ('body', 'echo')");
  });
});

// Regression: the response always said "assistant"; vLLM's get_chat_request_role gives a request
// without a generation prompt the last message's role, in the message and on the role chunk.
describe('the response role without a generation prompt', () => {
  const asUser = { messages: [{ role: 'user', content: 'What is the answer?' }], add_generation_prompt: false };

  it("is the last message's role, whole and streamed", async () => {
    const whole = (await (await postChat(sim.url, asUser)).json()) as { choices: Array<{ message: { role: string } }> };
    expect(whole.choices[0]!.message.role).toBe('user');
    const payloads = await allSseData(await postChat(sim.url, { ...asUser, stream: true }));
    expect(JSON.parse(payloads[0]!).choices[0].delta).toEqual({ role: 'user', content: '' });
  });

  it('stays "assistant" with the generation prompt, and after an assistant prefix', async () => {
    const whole = (await (await postChat(sim.url, { ...asUser, add_generation_prompt: true })).json()) as { choices: Array<{ message: { role: string } }> };
    expect(whole.choices[0]!.message.role).toBe('assistant');
    const payloads = await allSseData(await postChat(sim.url, { ...continuation, stream: true }));
    expect(JSON.parse(payloads[0]!).choices[0].delta).toEqual({ role: 'assistant', content: '' });
  });
});
