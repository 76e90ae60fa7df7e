import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeText, EOS_TOKEN_ID } from '../../sim/mistral-tokenizer.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario } from './sim-test-helpers.ts';

// vLLM 0.10.2 on: `return_token_ids: true` puts the prompt's ids and the generated ids (EOS
// included) in the answer; without it the same fields are null.
const REPLY = 'Hello world! \u{1F9EC} done.';
const MODEL = 'mistral-7b-instruct-sim';
const messages = [{ role: 'user' as const, content: 'say hello' }];

let sim: SimHandle;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', REPLY)] });
  client = new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 });
});
afterAll(() => sim.close());

/** The ids the simulator counts for these messages (its /tokenize, as usage.prompt_tokens counts them). */
async function promptIds(): Promise<number[]> {
  const res = await fetch(sim.url.replace(/\/v1$/, '/tokenize'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages }) });
  return ((await res.json()) as { tokens: number[] }).tokens;
}

interface TokenIdFields {
  prompt_token_ids?: number[] | null;
  choices: Array<{ token_ids?: number[] | null }>;
}

describe('return_token_ids on /v1/chat/completions', () => {
  it('gives the prompt ids at the top and the generated ids on the choice, not streamed', async () => {
    const generated = [...encodeText(REPLY), EOS_TOKEN_ID];
    const asked = (await client.chat.completions.create({ model: MODEL, messages, return_token_ids: true } as OpenAI.ChatCompletionCreateParamsNonStreaming)) as OpenAI.ChatCompletion & TokenIdFields;
    expect(asked.choices[0]!.message.content).toBe(REPLY);
    expect(asked.prompt_token_ids).toEqual(await promptIds());
    expect(asked.choices[0]!.token_ids).toEqual(generated);
    expect(asked.usage).toMatchObject({ prompt_tokens: asked.prompt_token_ids!.length, completion_tokens: generated.length });

    const plain = (await client.chat.completions.create({ model: MODEL, messages })) as OpenAI.ChatCompletion & TokenIdFields;
    expect(plain.prompt_token_ids).toBeNull();
    expect(plain.choices[0]!.token_ids).toBeNull();
  });

  it('streams the prompt ids on the role chunk and each token id on its chunk', async () => {
    const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true, return_token_ids: true } as OpenAI.ChatCompletionCreateParamsStreaming);
    const chunks: Array<OpenAI.ChatCompletionChunk & TokenIdFields> = [];
    for await (const chunk of stream) chunks.push(chunk as OpenAI.ChatCompletionChunk & TokenIdFields);
    const [role, ...deltas] = chunks;
    expect(role!.choices[0]!.delta.role).toBe('assistant');
    expect(role!.prompt_token_ids).toEqual(await promptIds());
    expect(deltas.map((c) => c.choices[0]!.token_ids!.length)).toEqual(deltas.map(() => 1));
    expect(deltas.flatMap((c) => c.choices[0]!.token_ids!)).toEqual([...encodeText(REPLY), EOS_TOKEN_ID]);
  });
});
