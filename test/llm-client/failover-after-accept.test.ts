import { describe, expect, it } from 'vitest';
import { UpstreamConnectionError, UpstreamFirstTokenTimeoutError } from '../../core/errors.ts';
import { createChatCompletionPump, type ReplicaAffinity } from '../../llm-client/index.ts';
import { expectedPlainParts, plainContentStream, vllmChunk } from './fixtures/vllm-streams.ts';
import { replicaState, runPump } from './replica-pump-run.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { pause, sseHeaders, startSseUpstream, startTestUpstream } from './upstream-test-server.ts';

const track = trackedUpstreams();
const timeouts = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 300, idleMs: 10_000 };

const live = () => track(startSseUpstream(plainContentStream));

/** vLLM with a wedged engine: it sends its headers (before prefill) and then nothing. */
const acceptsThenHangs = () => track(startTestUpstream((_req, res) => sseHeaders(res)));

/** A replica that accepts, sends its role chunk (no token), and then its connection drops. */
const acceptsThenDrops = () =>
  track(
    startTestUpstream(async (_req, res) => {
      sseHeaders(res);
      res.write(vllmChunk({ role: 'assistant', content: '' }));
      await pause(30);
      res.socket?.destroy();
    }),
  );

const run = runPump;
const stateOf = replicaState;

describe('a replica that accepts a stream and fails before its first token (regression: never rested, its share of requests failed)', () => {
  it('moves the stream on from a replica silent after its headers, rests that replica, and counts no success for it', async () => {
    const hung = await acceptsThenHangs();
    const good = await live();
    const pump = createChatCompletionPump({ baseUrl: [hung.baseUrl, good.baseUrl], timeouts });
    const affinity: ReplicaAffinity = { baseUrl: hung.baseUrl };
    const { parts, error, accepted } = await run(pump, affinity);
    expect(error).toBeUndefined();
    expect(parts).toEqual(expectedPlainParts);
    // Both took the stream; the consumer's response opened on the first.
    expect(accepted).toEqual([hung.baseUrl, good.baseUrl]);
    expect(affinity.baseUrl).toBe(good.baseUrl);
    expect(stateOf(pump, hung.baseUrl)).toMatchObject({ state: 'resting', healthy: false, accepted: 0, failures: 1, inFlight: 0 });
    expect(stateOf(pump, good.baseUrl)).toMatchObject({ state: 'healthy', accepted: 1, failures: 0 });
    await hung.requestSocketClosed(0);

    // While it rests, the next requests do not go to it.
    for (let i = 0; i < 3; i++) expect((await run(pump)).error).toBeUndefined();
    expect(hung.requests).toHaveLength(1);
  });

  it('moves the stream on from a replica that drops it after its role chunk, with one start part for the consumer', async () => {
    const dropping = await acceptsThenDrops();
    const good = await live();
    const pump = createChatCompletionPump({ baseUrl: [dropping.baseUrl, good.baseUrl], timeouts });
    const { parts, error, accepted } = await run(pump, { baseUrl: dropping.baseUrl });
    expect(error).toBeUndefined();
    expect(parts).toEqual(expectedPlainParts);
    expect(accepted).toHaveLength(2);
    expect(stateOf(pump, dropping.baseUrl)).toMatchObject({ state: 'resting', accepted: 0, failures: 1 });
  });

  it('ends with the last replica’s error when every replica fails that way, each tried once and rested', async () => {
    const hung = await acceptsThenHangs();
    const dropping = await acceptsThenDrops();
    const pump = createChatCompletionPump({ baseUrl: [hung.baseUrl, dropping.baseUrl], timeouts });
    const { parts, error } = await run(pump, { baseUrl: hung.baseUrl });
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect(parts.filter((p) => p.type === 'start')).toHaveLength(1);
    expect(parts.filter((p) => p.type !== 'start')).toEqual([]);
    expect(pump.replicas!.states().map((s) => [s.state, s.failures])).toEqual([
      ['resting', 1],
      ['resting', 1],
    ]);
  });

  it('with a single upstream, still fails the stream with the first-token timeout (nothing to move to)', async () => {
    const hung = await acceptsThenHangs();
    const pump = createChatCompletionPump({ baseUrl: hung.baseUrl, timeouts });
    const { error, accepted } = await run(pump);
    expect(error).toBeInstanceOf(UpstreamFirstTokenTimeoutError);
    expect(accepted).toEqual([hung.baseUrl]);
  });

  it('never moves a stream once a token reached the consumer, but counts the lost connection against the replica', async () => {
    const breaking = await track(
      startTestUpstream((_req, res) => {
        sseHeaders(res);
        res.write(vllmChunk({ content: 'Par' }));
        setTimeout(() => res.socket?.destroy(), 20);
      }),
    );
    const good = await live();
    const pump = createChatCompletionPump({ baseUrl: [breaking.baseUrl, good.baseUrl], timeouts });
    const { error, parts, accepted } = await run(pump, { baseUrl: breaking.baseUrl });
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect(accepted).toEqual([breaking.baseUrl]);
    expect(parts.filter((p) => p.type === 'content')).toEqual([{ type: 'content', text: 'Par' }]);
    expect(good.requests).toHaveLength(0);
    // It served the first token (a success), then fell over (a failure): it rests.
    expect(stateOf(pump, breaking.baseUrl)).toMatchObject({ state: 'resting', accepted: 1, failures: 1 });
  });
});
