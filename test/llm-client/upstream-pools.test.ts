import { describe, expect, it } from 'vitest';
import { ShuttingDownError } from '../../core/errors.ts';
import { closeUpstreamPools, createChatCompletionPump, type ChatCompletionPump, type ReplicaAffinity, type ReplicaHealthEvent, type UpstreamPart } from '../../llm-client/index.ts';
import { MODEL, plainContentStream, vllmChunk } from './fixtures/vllm-streams.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { pause, sseHeaders, startSseUpstream, startTestUpstream } from './upstream-test-server.ts';

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const track = trackedUpstreams();

function start(pump: ChatCompletionPump, affinity?: ReplicaAffinity) {
  const parts: UpstreamPart[] = [];
  const stream = pump({ body, signal: new AbortController().signal, affinity }, (part) => parts.push(part));
  const outcome = stream.done.then(
    () => ({ parts, error: undefined as unknown }),
    (error: unknown) => ({ parts, error }),
  );
  return { parts, outcome };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await pause(5);
}

describe('closeUpstreamPools under streams in flight (regression: the cut counted as the replica failing)', () => {
  it('ends a stream not yet answered as a shutdown: no rest, no failure counted, no failover to another replica', async () => {
    const slow = await track(startTestUpstream(() => {}));
    const other = await track(startSseUpstream(plainContentStream));
    const events: ReplicaHealthEvent[] = [];
    const pump = createChatCompletionPump({ baseUrl: [slow.baseUrl, other.baseUrl] }, { onReplicaHealthChange: (e) => events.push(e) });
    const { outcome } = start(pump, { baseUrl: slow.baseUrl });
    await until(() => slow.requests.length === 1);

    await closeUpstreamPools();
    const { error, parts } = await outcome;
    expect(error).toBeInstanceOf(ShuttingDownError);
    expect(error).toMatchObject({ code: 'gateway_shutting_down' });
    expect(parts).toEqual([]);
    expect(events).toEqual([]);
    expect(other.requests).toHaveLength(0);
    expect(pump.replicas!.states().map((s) => [s.healthy, s.failures, s.inFlight])).toEqual([
      [true, 0, 0],
      [true, 0, 0],
    ]);
  });

  it('ends a stream cut mid-answer as a shutdown too, after the tokens it delivered', async () => {
    const streaming = await track(
      startTestUpstream((_req, res) => {
        sseHeaders(res);
        res.write(vllmChunk({ content: 'Par' }));
      }),
    );
    const { parts, outcome } = start(createChatCompletionPump({ baseUrl: streaming.baseUrl }));
    await until(() => parts.some((p) => p.type === 'content'));

    await closeUpstreamPools();
    const { error } = await outcome;
    expect(error).toBeInstanceOf(ShuttingDownError);
    expect(parts.map((p) => p.type)).toEqual(['start', 'content']);
    expect(streaming.requests).toHaveLength(1);
  });
});
