import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { SIM_MODEL } from '../support/conveyor-fixture.ts';
import { fastSimGateway } from '../support/fast-sim-gateway.ts';

/**
 * vLLM's `stop_reason`: which of the client's stop strings ended the answer. A client that sends
 * several reads it to know which matched (the text leaves it out). The gateway dropped it, so
 * the same request through the gateway had no stop_reason where vLLM (the simulator) names it.
 */
describe("vLLM's stop_reason through the gateway", () => {
  const handles = fastSimGateway();
  const request = { model: SIM_MODEL, messages: [{ role: 'user' as const, content: 'Tell me about continuous batching.' }], stop: ['never written', 'simulator'] };
  type WithStopReason = { stop_reason?: unknown; finish_reason: string | null };

  it('names the stop string that ended the answer, streamed and not, as the upstream does', async () => {
    const ours = new OpenAI({ baseURL: `${handles.gateway.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const theirs = new OpenAI({ baseURL: handles.sim.url, apiKey: 'x', maxRetries: 0 });
    const [direct, through] = await Promise.all([theirs.chat.completions.create(request), ours.chat.completions.create(request)]);
    expect((direct.choices[0] as WithStopReason).stop_reason).toBe('simulator');
    expect(through.choices[0]!.message.content).toBe(direct.choices[0]!.message.content);
    expect(through.choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: 'simulator' });

    const finishes: WithStopReason[] = [];
    for await (const chunk of await ours.chat.completions.create({ ...request, stream: true })) {
      const choice = chunk.choices[0] as WithStopReason | undefined;
      if (choice?.finish_reason) finishes.push(choice);
    }
    expect(finishes).toEqual([expect.objectContaining({ finish_reason: 'stop', stop_reason: 'simulator' })]);
  });

  /**
   * A stop token (the client's `stop_token_ids`, or a model's second end token from its
   * generation_config, Llama 3.1's `<|eom_id|>`) is named by its id, an integer: the decoder kept
   * only a string, so the gateway's answer had no stop_reason where vLLM's said which token ended it.
   */
  it('names the stop token that ended the answer by its id, streamed and not, as the upstream does', async () => {
    const ours = new OpenAI({ baseURL: `${handles.gateway.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const theirs = new OpenAI({ baseURL: handles.sim.url, apiKey: 'x', maxRetries: 0 });
    const ids = await theirs.chat.completions.create({ ...request, stop: null, return_token_ids: true } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const stopToken = (ids.choices[0] as { token_ids?: number[] }).token_ids![5]!;
    const byToken = { ...request, stop: null, stop_token_ids: [stopToken] } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const [direct, through] = await Promise.all([theirs.chat.completions.create(byToken), ours.chat.completions.create(byToken)]);
    expect(direct.choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: stopToken });
    expect(through.choices[0]!.message.content).toBe(direct.choices[0]!.message.content);
    expect(through.choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: stopToken });

    const finishes: WithStopReason[] = [];
    for await (const chunk of await ours.chat.completions.create({ ...byToken, stream: true })) {
      const choice = chunk.choices[0] as WithStopReason | undefined;
      if (choice?.finish_reason) finishes.push(choice);
    }
    expect(finishes).toEqual([expect.objectContaining({ finish_reason: 'stop', stop_reason: stopToken })]);
  });

  it('adds none where no stop string ended it (an answer ended by the model, or cut by max_tokens)', async () => {
    const ours = new OpenAI({ baseURL: `${handles.gateway.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const ended = await ours.chat.completions.create({ ...request, stop: ['never written'] });
    const cut = await ours.chat.completions.create({ ...request, max_tokens: 2 });
    expect(ended.choices[0]).not.toHaveProperty('stop_reason');
    expect(cut.choices[0]).toMatchObject({ finish_reason: 'length' });
    expect(cut.choices[0]).not.toHaveProperty('stop_reason');
  });
});
