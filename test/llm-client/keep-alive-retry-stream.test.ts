import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { UpstreamConnectionError, UpstreamFirstTokenTimeoutError } from '../../core/errors.ts';
import { createChatCompletionPump, type ChatCompletionPump, type ReplicaAffinity, type ReplicaHealthEvent, type UpstreamPart } from '../../llm-client/index.ts';
import { STALE_CLOSE_WINDOW_MS } from '../../llm-client/upstream-failure.ts';
import { expectedPlainParts, MODEL, plainContentStream, vllmChunk } from './fixtures/vllm-streams.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { pause, sseHeaders, startSseUpstream, startTestUpstream } from './upstream-test-server.ts';

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const track = trackedUpstreams();

type Drop = 'close' | 'reset';

/**
 * An upstream whose keep-alive connections go stale: it answers the first request on each
 * connection, and closes (FIN: undici's `other side closed`) or resets (RST: ECONNRESET) the
 * connection when a second one arrives on it, as a server whose idle timeout fired just as the
 * request was sent. `log` says, per request, which connection carried it and what happened.
 */
async function staleKeepAliveUpstream(drop: Drop) {
  const ids = new WeakMap<Socket, number>();
  let connections = 0;
  const log: string[] = [];
  const server = await track(
    startTestUpstream((req, res) => {
      const fresh = !ids.has(req.socket);
      if (fresh) ids.set(req.socket, ++connections);
      const id = ids.get(req.socket);
      if (!fresh) {
        log.push(`#${id} dropped`);
        if (drop === 'reset') req.socket.resetAndDestroy();
        else req.socket.destroy();
        return;
      }
      log.push(`#${id} served`);
      sseHeaders(res);
      res.end(plainContentStream);
    }),
  );
  return { server, log };
}

/** An upstream that reads every request and closes its connection without answering. */
const dropsEverything = () => track(startTestUpstream((req) => void req.socket.destroy()));

async function run(pump: ChatCompletionPump, affinity?: ReplicaAffinity) {
  const parts: UpstreamPart[] = [];
  const stream = pump({ body, signal: new AbortController().signal, affinity }, (part) => parts.push(part));
  const error = await stream.done.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { parts, error };
}

/** undici hands a finished answer's socket back to its pool in a later turn of the loop. */
const backInPool = () => pause(20);

describe('a pooled keep-alive socket the server already closed (regression: it failed the request or rested the replica)', () => {
  for (const drop of ['close', 'reset'] as const) {
    it(`sends the request again on a new connection, unseen by the consumer (${drop})`, async () => {
      const { server, log } = await staleKeepAliveUpstream(drop);
      const pump = createChatCompletionPump({ baseUrl: server.baseUrl });
      expect((await run(pump)).error).toBeUndefined();
      await backInPool();
      const second = await run(pump);
      expect(second.error).toBeUndefined();
      expect(second.parts).toEqual(expectedPlainParts);
      expect(log).toEqual(['#1 served', '#1 dropped', '#2 served']);
    });
  }

  it('keeps the replica healthy and the conversation on it: no rest, no failure, no failover', async () => {
    const { server: stale, log } = await staleKeepAliveUpstream('close');
    const other = await track(startSseUpstream(plainContentStream));
    const events: ReplicaHealthEvent[] = [];
    const pump = createChatCompletionPump({ baseUrl: [stale.baseUrl, other.baseUrl] }, { onReplicaHealthChange: (e) => events.push(e) });
    const affinity: ReplicaAffinity = { baseUrl: stale.baseUrl };
    expect((await run(pump, affinity)).error).toBeUndefined();
    await backInPool();
    expect((await run(pump, affinity)).error).toBeUndefined();

    expect(log).toEqual(['#1 served', '#1 dropped', '#2 served']);
    expect(affinity.baseUrl).toBe(stale.baseUrl);
    expect(other.requests).toHaveLength(0);
    expect(events).toEqual([]);
    expect(pump.replicas!.states().find((s) => s.baseUrl === stale.baseUrl)).toMatchObject({ healthy: true, failures: 0, accepted: 2 });
  });

  it('does not send again a request dropped on a new connection: that server is failing, not stale (regression: it went twice)', async () => {
    const dropper = await dropsEverything();
    const { error } = await run(createChatCompletionPump({ baseUrl: dropper.baseUrl }));
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect(dropper.requests).toHaveLength(1);
  });

  it('counts that failure against the replica, which rests, and the request moves on', async () => {
    const dropper = await dropsEverything();
    const other = await track(startSseUpstream(plainContentStream));
    const events: ReplicaHealthEvent[] = [];
    const pump = createChatCompletionPump({ baseUrl: [dropper.baseUrl, other.baseUrl] }, { onReplicaHealthChange: (e) => events.push(e) });
    const { parts, error } = await run(pump, { baseUrl: dropper.baseUrl });
    expect(error).toBeUndefined();
    expect(parts).toEqual(expectedPlainParts);
    expect([dropper.requests.length, other.requests.length]).toEqual([1, 1]);
    expect(events.map((e) => [e.type, e.baseUrl])).toEqual([['resting', dropper.baseUrl]]);
  });

  it('runs the retry on the attempt’s first-token clock: it gets what is left of the wait, not a new one', async () => {
    const served = new WeakSet<Socket>();
    const server = await track(
      startTestUpstream(async (req, res) => {
        if (served.has(req.socket)) {
          await pause(300);
          return void req.socket.destroy();
        }
        served.add(req.socket);
        sseHeaders(res);
        if (server.requests.length > 1) await pause(700);
        res.end(plainContentStream);
      }),
    );
    // The stale close comes at 300 ms, well inside the 900 ms wait even on a loaded machine (with
    // 450 the wait once ran out first under load, before any retry); the retry's token at 300 +
    // 700 ms is past what is left of it, and inside a new 900 ms wait, which it must not get.
    const timeouts = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 900, idleMs: 10_000 };
    const pump = createChatCompletionPump({ baseUrl: server.baseUrl, timeouts });
    expect((await run(pump)).error).toBeUndefined();
    await backInPool();
    const { parts, error } = await run(pump);
    expect(error).toBeInstanceOf(UpstreamFirstTokenTimeoutError);
    expect(server.requests).toHaveLength(3);
    expect(parts.filter((p) => p.type === 'content')).toEqual([]);
  });

  it('does not send again a request reset long after it was written: that server had it, as llama.cpp holds its status line through the prefill (regression: it went twice)', async () => {
    const served = new WeakSet<Socket>();
    const server = await track(
      startTestUpstream(async (req, res) => {
        if (served.has(req.socket)) {
          await pause(STALE_CLOSE_WINDOW_MS + 300);
          return void req.socket.resetAndDestroy();
        }
        served.add(req.socket);
        sseHeaders(res);
        res.end(plainContentStream);
      }),
    );
    const pump = createChatCompletionPump({ baseUrl: server.baseUrl });
    expect((await run(pump)).error).toBeUndefined();
    await backInPool();
    const { error } = await run(pump);
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect(server.requests).toHaveLength(2);
  });

  it('never sends again a request whose server answered: a connection cut after the status line ends the stream', async () => {
    const breaking = await track(
      startTestUpstream((_req, res) => {
        sseHeaders(res);
        res.write(vllmChunk({ content: 'Par' }));
        setTimeout(() => res.socket?.destroy(), 20);
      }),
    );
    const { parts, error } = await run(createChatCompletionPump({ baseUrl: breaking.baseUrl }));
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect(parts.filter((p) => p.type === 'content')).toEqual([{ type: 'content', text: 'Par' }]);
    expect(breaking.requests).toHaveLength(1);
  });
});
