import OpenAI, { NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';

let sim: SimHandle;
let client: OpenAI;

beforeAll(async () => {
  sim = await startSim({ profile: 'fast-test' });
  client = new OpenAI({ baseURL: sim.url, apiKey: 'sim', maxRetries: 0 });
});
afterAll(() => sim.close());

const ask = 'Write Python that plots a sine wave.';

describe('the official openai client against the simulator', () => {
  it('lists the models', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain('mistral-7b-instruct-sim');
  });

  it('gets a non-streamed completion: the sine-wave script', async () => {
    const completion = await client.chat.completions.create({
      model: 'mistral-7b-instruct-sim',
      messages: [{ role: 'user', content: ask }],
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.role).toBe('assistant');
    expect(choice.message.content).toContain('```python\nimport numpy as np\n');
    expect(choice.message.content).toContain('fig.savefig("sine_wave.png")');
    expect(completion.usage!.completion_tokens).toBeGreaterThan(100);
  });

  it('streams the same text, with the usage chunk when asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'sim-sine-wave',
      messages: [{ role: 'user', content: ask }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(finish).toBe('stop');
    expect(text.startsWith('Here is a short script that plots a sine wave')).toBe(true);
    expect(text.endsWith('```')).toBe(true);
    expect(usage!.total_tokens).toBe(usage!.prompt_tokens + usage!.completion_tokens);
  });

  it('carries the tool output into the round-2 answer', async () => {
    const completion = await client.chat.completions.create({
      model: 'sim-sine-wave-stdlib',
      messages: [
        { role: 'user', content: ask },
        { role: 'assistant', content: '```python\nprint(1)\n```' },
        { role: 'tool', tool_call_id: 'call_0', content: 'samples=13 peak=1.000' },
      ],
    });
    expect(completion.choices[0]!.message.content).toContain('samples=13 peak=1.000');
  });

  it('surfaces an unknown model as the client\'s NotFoundError', async () => {
    const failing = client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
    await expect(failing).rejects.toBeInstanceOf(NotFoundError);
    await expect(failing).rejects.toMatchObject({ status: 404, message: expect.stringContaining('does not exist') });
  });
});
