import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { withoutRequestPart } from '../support/call-ids.ts';
import { SIM_MODEL, SINE_STDLIB_REQUEST, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

describe('the official openai npm client against the gateway', () => {
  let conveyor: ConveyorHandle;
  let viaGateway: OpenAI;
  let direct: OpenAI;
  beforeAll(async () => {
    conveyor = await startTestConveyor();
    viaGateway = new OpenAI({ baseURL: `${conveyor.gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    direct = new OpenAI({ baseURL: conveyor.sim!.url, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  const plain = { model: SIM_MODEL, messages: [{ role: 'user' as const, content: 'Tell me about continuous batching.' }] };

  it('streams a completion without tools unchanged', async () => {
    const collect = async (client: OpenAI) => {
      const stream = await client.chat.completions.create({ ...plain, stream: true, stream_options: { include_usage: true } });
      let content = '';
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined;
      let role: string | undefined;
      for await (const chunk of stream) {
        expect(chunk.object).toBe('chat.completion.chunk');
        const choice = chunk.choices[0];
        if (choice?.delta.role) role = choice.delta.role;
        content += choice?.delta.content ?? '';
        finish = choice?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      return { content, finish, usage, role };
    };
    const [ours, theirs] = [await collect(viaGateway), await collect(direct)];
    expect(ours.content.length).toBeGreaterThan(0);
    expect(ours.content).toBe(theirs.content);
    expect(ours.finish).toBe('stop');
    expect(ours.role).toBe('assistant');
    expect(ours.usage?.completion_tokens).toBe(theirs.usage?.completion_tokens);
  });

  it('answers non-streamed with the same text as the upstream', async () => {
    const [ours, theirs] = await Promise.all([viaGateway.chat.completions.create(plain), direct.chat.completions.create(plain)]);
    expect(ours.choices[0]?.message.content).toBe(theirs.choices[0]?.message.content);
    expect(ours.choices[0]?.finish_reason).toBe('stop');
  });

  it("ignores the gateway's tool events safely in its stream helper", async () => {
    const runner = viaGateway.chat.completions.stream({ ...(SINE_STDLIB_REQUEST as typeof plain), stream: true });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]?.message.content).toContain('samples=13 peak=1.000');
  });

  it('with conveyor_events: false, streams no extension chunk and still gives the turns of the tool rounds on the finish chunk', async () => {
    type Carried = { conveyor?: { type: string; messages: unknown[] } };
    const request = { ...SINE_STDLIB_REQUEST, stream: true, conveyor_events: false } as unknown as OpenAI.ChatCompletionCreateParamsStreaming;
    const collect = async () => {
      const chunks: Array<OpenAI.ChatCompletionChunk & Carried> = [];
      for await (const chunk of await viaGateway.chat.completions.create(request)) chunks.push(chunk);
      return chunks;
    };
    // Beside it: the same request with the events, non-streamed, and through the SDK's stream helper.
    const [chunks, on, whole, final] = await Promise.all([
      collect(),
      streamChat(conveyor.gateway.url, SINE_STDLIB_REQUEST),
      postJson(conveyor.gateway.url, '/v1/chat/completions', SINE_STDLIB_REQUEST),
      viaGateway.chat.completions.stream(request).finalChatCompletion() as Promise<OpenAI.ChatCompletion & Carried>,
    ]);
    // Every chunk has its choice (no `choices: []` extension chunk), and only the finish chunk has `conveyor`.
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    const last = chunks.at(-1)!;
    expect(last.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.filter((c) => c.conveyor !== undefined)).toEqual([last]);
    expect(last.conveyor!.type).toBe('response.messages');

    // The same turns as the events' response.messages, and as a non-streamed body's conveyor.messages then its answer.
    expect(withoutRequestPart(last.conveyor!.messages)).toEqual(withoutRequestPart(on.events.find((e) => e.type === 'response.messages')!.messages));
    const answer = last.conveyor!.messages.at(-1) as { role: string; content: string };
    expect(answer.role).toBe('assistant');
    expect(answer.content).toContain('samples=13 peak=1.000');
    expect(withoutRequestPart(last.conveyor!.messages.slice(0, -1))).toEqual(withoutRequestPart(whole.json.conveyor.messages));

    // The SDK's stream helper keeps the field on its final completion, as it keeps any it does not know.
    expect(final.choices[0]?.message.content).toContain('samples=13 peak=1.000');
    expect(withoutRequestPart(final.conveyor?.messages)).toEqual(withoutRequestPart(last.conveyor!.messages));
  });

  it('lists the upstream models', async () => {
    const models = await viaGateway.models.list();
    expect(models.data.map((m) => m.id)).toContain(SIM_MODEL);
  });

  it('raises a typed error for a bad request, naming the request as OpenAI does (x-request-id)', async () => {
    const error = await viaGateway.chat.completions.create({ model: SIM_MODEL, messages: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).requestID).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
  });

  it("gives the SDK the request's id, the one its timeline is kept under", async () => {
    const { data, request_id } = await viaGateway.chat.completions.create(plain).withResponse();
    expect(request_id).toBe(data.id);
    const timeline = await fetch(`${conveyor.gateway.url}/v1/requests/${request_id}/timeline`);
    expect(timeline.status).toBe(200);
  });
});
