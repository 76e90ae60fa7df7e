import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { closeUpstreamPools } from '../../llm-client/index.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { startTestUpstream, type TestUpstream } from '../llm-client/upstream-test-server.ts';
import { answeringTool, toolMap } from '../support/scripted-gateway.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

type Body = { messages: Array<{ role: string }>; add_generation_prompt?: unknown; continue_final_message?: unknown };

/**
 * vLLM's `add_generation_prompt: false` (without `continue_final_message`) renders the client's
 * conversation with no assistant header after it: the client's own raw continuation. It is the
 * client's round's: a later round's prompt ends with the gateway's tool results, and without the
 * generation prompt the template leaves the model writing on inside the tool's turn (vLLM then
 * answers in the tool's role) instead of opening the assistant's reply. Round 2 went upstream
 * with the client's `false` unchanged.
 */
describe("vLLM's add_generation_prompt: false across tool rounds, through the simulator", () => {
  let sim: SimHandle;
  let recorder: TestUpstream;
  let gateway: GatewayHandle;
  beforeAll(async () => {
    sim = await startSim({
      profile: { ...E2E_PROFILE, decode: { baseMs: 2, perSeqMs: 0 } },
      scenarios: [
        {
          name: 'lookup',
          rules: [
            { when: { explicit: true, round: 1, lastRole: 'user' }, reply: '[TOOL_CALLS][{"name": "lookup", "arguments": {"q": "tides"}}]' },
            { when: { explicit: true, lastRole: 'tool' }, reply: 'High tide is at {{tool_output}}.' },
          ],
        },
      ],
    });
    // Records what the gateway sends, and passes it to the simulator and its answer back as they come.
    recorder = await startTestUpstream(async (req, res, body) => {
      const answer = await fetch(`${sim.url}${req.url!.replace(/^\/v1/, '')}`, { method: req.method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      for await (const chunk of answer.body!) res.write(chunk);
      res.end();
    });
    gateway = await startGateway({ port: 0, upstream: { baseUrl: recorder.baseUrl } }, { tools: toolMap(answeringTool('lookup', () => '06:12')) });
  });
  afterAll(async () => {
    await gateway?.close();
    await recorder?.close();
    await sim?.close();
    await closeUpstreamPools();
  });

  it("sends the client's false in round 1 only, and round 2 (after the tool's result) with the generation prompt", async () => {
    const res = await postJson(gateway.url, '/v1/chat/completions', {
      model: SIM_MODEL,
      scenario: 'lookup',
      messages: [{ role: 'user', content: 'When is high tide?' }],
      add_generation_prompt: false,
    });
    expect(res.status).toBe(200);
    expect(res.json.conveyor.rounds).toBe(2);
    expect(res.json.choices[0].message.content).toBe('High tide is at 06:12.');
    const [round1, round2] = recorder.requests.map((r) => r.body as Body);
    expect(round1).toMatchObject({ add_generation_prompt: false });
    expect(round2!.messages.at(-1)!.role).toBe('tool');
    expect(round2!.add_generation_prompt).toBe(true);
    // No prefill was asked for: round 2 adds no continue_final_message of its own.
    expect(round2).not.toHaveProperty('continue_final_message');
  });

  /**
   * With vLLM's `echo`, a response in the last message's role (here the user's, the generation
   * prompt off) starts with that message's content. Round 1's assistant turn in round 2's prompt
   * held it too, "When is high tide?" put in the model's mouth, which it never wrote.
   */
  it("leaves the echoed message out of round 1's turn in round 2's prompt, and echoes it to the client once", async () => {
    const plain = recorder.requests.length;
    const res = await postJson(gateway.url, '/v1/chat/completions', {
      model: SIM_MODEL,
      scenario: 'lookup',
      messages: [{ role: 'user', content: 'When is high tide?' }],
      add_generation_prompt: false,
      echo: true,
    });
    expect(res.status).toBe(200);
    const round2 = recorder.requests[plain + 1]!.body as { messages: Array<{ role: string; content?: unknown }> };
    expect(round2.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    // The model wrote the call alone: the turn reads as it does without echo, no text (null).
    expect(round2.messages[1]!.content).toBeNull();
    expect(res.json.choices[0].message.content).toBe('When is high tide?\n\nHigh tide is at 06:12.');
  });

  /**
   * `conveyor.messages` (and a stream's `response.messages`) are the turns the gateway ran, for a
   * client to append to its conversation: round 1's turn held the echoed question in front of the
   * model's call, "When is high tide?" written as the model's, while round 2's prompt left it out.
   * The answer itself keeps the echo, as vLLM returns it.
   */
  it("keeps the echoed message out of round 1's turn in conveyor.messages and response.messages", async () => {
    const body = { model: SIM_MODEL, scenario: 'lookup', messages: [{ role: 'user', content: 'When is high tide?' }], add_generation_prompt: false, echo: true };
    const res = await postJson(gateway.url, '/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toBe('When is high tide?\n\nHigh tide is at 06:12.');
    const turns = res.json.conveyor.messages as Array<{ role: string; content: unknown; tool_calls?: unknown[] }>;
    expect(turns.map((m) => m.role)).toEqual(['assistant', 'tool']);
    // The model wrote the call alone: no text, as a turn that only called tools reads (null).
    expect(turns[0]).toMatchObject({ content: null, tool_calls: [{ function: { name: 'lookup' } }] });
    const streamed = await streamChat(gateway.url, body);
    expect(streamed.content).toBe('When is high tide?\n\nHigh tide is at 06:12.');
    const messages = streamed.events.find((e) => e.type === 'response.messages')?.['messages'] as Array<{ role: string; content: unknown }>;
    expect(messages[0]).toMatchObject({ role: 'assistant', content: null });
  });
});
