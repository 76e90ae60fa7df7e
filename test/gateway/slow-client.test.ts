import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { eventually, startTestConveyor } from '../support/conveyor-fixture.ts';
import { getJson, streamChat } from '../support/sse-client.ts';
import { FAST_DECODE_PROFILE, LONG_MODEL_NAME, startSlowReader, type SlowReader } from '../support/slow-reader.ts';

const TOKENS = 3_000;
const MODEL = LONG_MODEL_NAME;

describe('a client that reads slower than the model decodes', () => {
  let conveyor: ConveyorHandle;
  let client: SlowReader | undefined;
  beforeAll(async () => {
    conveyor = await startTestConveyor({ sim: { modelName: MODEL, profile: FAST_DECODE_PROFILE } });
  });
  afterAll(async () => {
    client?.kill();
    await conveyor?.close();
  });

  it('stops reading the upstream while the client is not reading, then delivers every token', async () => {
    const request = {
      model: MODEL,
      messages: [{ role: 'user', content: 'Say something long.' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: TOKENS,
      ignore_eos: true,
    };
    client = await startSlowReader(conveyor.gateway.url, '/v1/chat/completions', request);
    const requestId = /x-conveyor-request-id: (\S+)/i.exec(client.head)![1]!;
    const timeline = async () => ((await getJson(conveyor.gateway.url, `/v1/requests/${requestId}/timeline`)).json.events as TimelineEvent[]).map((e) => e.type);

    // The sim has decoded the whole answer; the gateway stopped reading it when the client's
    // socket filled, so it has not seen the decode end.
    await eventually(() => conveyor.sim!.counters().tokensGenerated >= TOKENS && conveyor.sim!.counters().running === 0, 'the sim has finished the sequence', 30_000);
    const whilePaused = await timeline();
    expect(whilePaused).toContain('client-paused');
    expect(whilePaused).not.toContain('decode-end');
    expect(whilePaused).not.toContain('request-end');

    const response = await client.readRest();
    const events = response.chunks.join('').split('\n\n').filter((e) => e.startsWith('data: '));
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
    const usage = chunks.at(-1).usage;
    expect(usage.completion_tokens).toBe(TOKENS);
    expect(chunks.find((c) => c.choices?.[0]?.finish_reason)?.choices[0].finish_reason).toBe('length');
    // Nothing was lost while the upstream waited: the same answer a client reading at once gets.
    const content = chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');
    const reference = await streamChat(conveyor.gateway.url, request);
    expect(reference.done).toBe(true);
    expect(content).toBe(reference.content);

    // Paused and resumed in turn (as often as the client's reads let the socket fill again),
    // all of it before the gateway read the decode's end.
    const flow = (await timeline()).filter((t) => t.startsWith('client-') || t === 'decode-end');
    expect(flow.at(-1)).toBe('decode-end');
    expect(flow.length).toBeGreaterThanOrEqual(3);
    flow.slice(0, -1).forEach((t, i) => expect(t).toBe(i % 2 === 0 ? 'client-paused' : 'client-resumed'));
  }, 60_000);

  it('cuts off a client that takes nothing for clientStallMs, stopping its decode', async () => {
    const stalling = await startTestConveyor({ gateway: { clientStallMs: 500 }, sim: { modelName: MODEL, profile: FAST_DECODE_PROFILE } });
    try {
      const request = { model: MODEL, messages: [{ role: 'user', content: 'Say something long.' }], stream: true, max_tokens: TOKENS, ignore_eos: true };
      const reader = await startSlowReader(stalling.gateway.url, '/v1/chat/completions', request);
      const requestId = /x-conveyor-request-id: (\S+)/i.exec(reader.head)![1]!;
      const events = async () => (await getJson(stalling.gateway.url, `/v1/requests/${requestId}/timeline`)).json.events as TimelineEvent[];
      await eventually(async () => (await events()).some((e) => e.type === 'request-end'), 'the gateway has ended the request', 30_000);
      const timeline = await events();
      expect(timeline).toContainEqual(expect.objectContaining({ type: 'abort', detail: 'client stalled: it took nothing for 500 ms' }));
      expect(timeline.map((e) => e.type)).not.toContain('decode-end');
      // What the client had not read is gone with the connection: no [DONE].
      expect((await reader.readRaw()).toString('utf8')).not.toContain('[DONE]');
    } finally {
      await stalling.close();
    }
  }, 60_000);
});
