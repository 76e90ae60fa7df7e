import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario } from './sim-test-helpers.ts';

const MODEL = 'mistral-7b-instruct-sim';
/** A prompt of a few hundred tokens: whole 16-token blocks of it are cached after its first run. */
const LONG = `hello ${'the quick brown fox jumps over the lazy dog; '.repeat(40)}`;

describe("the simulator's --enable-prompt-tokens-details (vLLM's)", () => {
  let sim: SimHandle;
  let plain: SimHandle;
  let gateway: GatewayHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', 'Hi.')], enablePromptTokensDetails: true });
    plain = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', 'Hi.')] });
    gateway = await startGateway({ port: 0, upstream: { baseUrl: sim.url } }, { tools: new Map() });
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([sim?.close(), plain?.close()]);
  });

  it("says how much of the prompt the prefix cache held: nothing the first time, whole blocks of it the next", async () => {
    const client = new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 });
    const ask = () => client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: LONG }] });
    const first = await ask();
    // vLLM leaves the details null when nothing was cached.
    expect(first.usage?.prompt_tokens_details).toBeNull();
    const second = await ask();
    const cached = second.usage!.prompt_tokens_details!.cached_tokens!;
    expect(cached % 16).toBe(0);
    expect(cached).toBeGreaterThan(second.usage!.prompt_tokens - 16);
    // Streamed, on the usage chunk.
    const stream = await client.chat.completions.create({ model: MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: LONG }] });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage?.prompt_tokens_details).toEqual({ cached_tokens: cached });
    // /v1/completions too.
    const complete = () => client.completions.create({ model: MODEL, prompt: `${LONG} as text`, max_tokens: 2 });
    expect((await complete()).usage?.prompt_tokens_details ?? null).toBeNull();
    expect((await complete()).usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
  });

  it('is off by default, as in vLLM: prompt_tokens_details null however much was cached', async () => {
    const client = new OpenAI({ baseURL: plain.url, apiKey: 'sim', maxRetries: 0 });
    await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: LONG }] });
    expect((await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: LONG }] })).usage?.prompt_tokens_details).toBeNull();
  });

  it('reaches a client through the gateway', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const ask = () => client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: `${LONG} (via the gateway)` }] });
    await ask();
    expect((await ask()).usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
  });
});
