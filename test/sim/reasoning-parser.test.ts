import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layoutReasoning, ReasoningStream } from '../../sim/reasoning-split.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';

describe('the simulator reasoning parser (vLLM --reasoning-parser), laid out on the whole reply', () => {
  it('deepseek_r1 reads from the start (a leading <think> dropped) up to </think>; qwen3 only a block the reply opens', () => {
    expect(layoutReasoning('Hmm.</think>Hi', 'deepseek_r1')).toEqual({ reasoningStart: 0, reasoningEnd: 4, contentStart: 12 });
    expect(layoutReasoning('<think>Hmm.</think>Hi', 'deepseek_r1')).toEqual({ reasoningStart: 7, reasoningEnd: 11, contentStart: 19 });
    expect(layoutReasoning('Hmm, no end', 'deepseek_r1')).toEqual({ reasoningStart: 0, reasoningEnd: 11, contentStart: 11 });
    expect(layoutReasoning('Hi</think>', 'qwen3')).toEqual({ reasoningStart: 0, reasoningEnd: 0, contentStart: 0 });
    expect(layoutReasoning('<think>Hmm.</think>Hi', 'qwen3')).toEqual({ reasoningStart: 7, reasoningEnd: 11, contentStart: 19 });
  });

  it('maps each token onto it, markers split over tokens sent as nothing', () => {
    const reply = '<think>Two and two.</think>\n\nFour.';
    const tokens = ['<th', 'ink>', 'Two and', ' two.</', 'think', '>\n', '\nFour.'];
    expect(tokens.join('')).toBe(reply);
    const stream = new ReasoningStream(reply, 'deepseek_r1');
    expect(tokens.map((t) => stream.push(t))).toEqual([{}, {}, { reasoning: 'Two and' }, { reasoning: ' two.' }, {}, { content: '\n' }, { content: '\nFour.' }]);
    expect(stream.content).toBe('\n\nFour.');
  });
});

describe('a simulator started with reasoningParser, through the official openai client', () => {
  let sim: SimHandle;
  const client = () => new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 });
  const REPLY = 'The user wants the sum. Two and two make four.</think>\n\nThe answer is 4.';

  beforeAll(async () => {
    sim = await startSim({ profile: 'fast-test', reasoningParser: 'deepseek_r1', scenarios: [{ name: 'think', rules: [{ when: {}, reply: REPLY }] }] });
  });
  afterAll(() => sim?.close());

  it('streams the reasoning as delta.reasoning_content, then the answer as content', async () => {
    const stream = await client().chat.completions.create({ model: 'mistral-7b-instruct-sim', messages: [{ role: 'user', content: '2+2?' }], stream: true });
    let reasoning = '';
    let content = '';
    let reasoningAfterContent = false;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
      if (delta?.reasoning_content) {
        reasoning += delta.reasoning_content;
        if (content !== '') reasoningAfterContent = true;
      }
      if (delta?.content) content += delta.content;
    }
    expect(reasoning).toBe('The user wants the sum. Two and two make four.');
    expect(content).toBe('\n\nThe answer is 4.');
    expect(reasoningAfterContent).toBe(false);
  });

  it('answers a non-streamed request with message.reasoning_content beside the content', async () => {
    const completion = await client().chat.completions.create({ model: 'mistral-7b-instruct-sim', messages: [{ role: 'user', content: '2+2?' }] });
    const message = completion.choices[0]!.message as { content: string | null; reasoning_content?: string | null };
    expect(message.reasoning_content).toBe('The user wants the sum. Two and two make four.');
    expect(message.content).toBe('\n\nThe answer is 4.');
  });
});
