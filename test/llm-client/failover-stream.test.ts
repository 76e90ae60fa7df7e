import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ClientAbortedError, UpstreamModelNotFoundError, UpstreamResponseError, UpstreamTotalTimeoutError } from '../../core/errors.ts';
import { createChatCompletionPump, type ReplicaAffinity } from '../../llm-client/index.ts';
import { expectedPlainParts, MODEL, modelNotFoundBody, plainContentStream, vllmChunk } from './fixtures/vllm-streams.ts';
import { replicaState, runPump } from './replica-pump-run.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { pause, sseHeaders, startSseUpstream, startTestUpstream } from './upstream-test-server.ts';

const track = trackedUpstreams();

const live = () => track(startSseUpstream(plainContentStream));

/** Answers every request with `status` and an OpenAI error body. */
const failing = (status: number) =>
  track(
    startTestUpstream((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...modelNotFoundBody, code: status }));
    }),
  );

/** vLLM once its engine is dead (VLLM_KEEP_ALIVE_ON_ENGINE_DEATH): `status` with no body. */
const bare = (status: number) => track(startTestUpstream((_req, res) => void res.writeHead(status).end()));

/** A base URL on which nothing listens: connections are refused. */
async function deadUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

const run = runPump;
const stateOf = replicaState;

describe('a pump over several replicas: failover before the upstream accepts', () => {
  it('moves a stream off a replica that refuses connections, unseen by the consumer, and rests that replica', async () => {
    const good = await live();
    const dead = await deadUrl();
    const pump = createChatCompletionPump({ baseUrl: [dead, good.baseUrl] });
    const affinity: ReplicaAffinity = { baseUrl: dead };

    const first = await run(pump, affinity);
    expect(first.error).toBeUndefined();
    expect(first.parts).toEqual(expectedPlainParts);
    expect(first.accepted).toHaveLength(1);
    expect(affinity.baseUrl).toBe(good.baseUrl);
    expect(stateOf(pump, dead)).toMatchObject({ healthy: false, failures: 1, inFlight: 0 });
    expect(stateOf(pump, good.baseUrl)).toMatchObject({ healthy: true, accepted: 1, inFlight: 0 });

    // While it rests, new conversations do not even try it.
    for (let i = 0; i < 3; i++) expect((await run(pump)).error).toBeUndefined();
    expect(good.requests).toHaveLength(4);
    expect(stateOf(pump, dead).failures).toBe(1);
  });

  it('moves on after 503 (resting the replica) and after 429 (only busy: it stays healthy)', async () => {
    for (const [status, healthy] of [
      [503, false],
      [429, true],
    ] as const) {
      const bad = await failing(status);
      const good = await live();
      const pump = createChatCompletionPump({ baseUrl: [bad.baseUrl, good.baseUrl] });
      const result = await run(pump, { baseUrl: bad.baseUrl });
      expect(result.error).toBeUndefined();
      expect(result.parts).toEqual(expectedPlainParts);
      expect([bad.requests.length, good.requests.length]).toEqual([1, 1]);
      expect(stateOf(pump, bad.baseUrl).healthy).toBe(healthy);
    }
  });

  it('does not retry what every replica would answer the same (404 for a model the client named): the error is the first replica’s', async () => {
    const bad = await failing(404);
    const good = await live();
    const pump = createChatCompletionPump({ baseUrl: [bad.baseUrl, good.baseUrl] });
    const { error, parts } = await run(pump, { baseUrl: bad.baseUrl });
    expect(error).toBeInstanceOf(UpstreamModelNotFoundError);
    expect((error as UpstreamResponseError).status).toBe(404);
    expect(parts).toEqual([]);
    expect(good.requests).toHaveLength(0);
    expect(stateOf(pump, bad.baseUrl).healthy).toBe(true);
  });

  it('moves on from a replica that does not serve the model the gateway names (404 model_not_found), and rests it', async () => {
    const bad = await failing(404);
    const good = await live();
    const pump = createChatCompletionPump({ baseUrl: [bad.baseUrl, good.baseUrl], model: MODEL });
    const { error, parts } = await run(pump, { baseUrl: bad.baseUrl });
    expect(error).toBeUndefined();
    expect(parts).toEqual(expectedPlainParts);
    expect([bad.requests.length, good.requests.length]).toEqual([1, 1]);
    expect(stateOf(pump, bad.baseUrl)).toMatchObject({ healthy: false, failures: 1 });
  });

  it('moves on from a replica whose engine is dead (a bare 500) or that refuses the gateway’s key (401, 403), and rests it', async () => {
    for (const status of [500, 401, 403]) {
      const bad = status === 500 ? await bare(500) : await failing(status);
      const good = await live();
      const pump = createChatCompletionPump({ baseUrl: [bad.baseUrl, good.baseUrl] });
      const { error, parts } = await run(pump, { baseUrl: bad.baseUrl });
      expect(error).toBeUndefined();
      expect(parts).toEqual(expectedPlainParts);
      expect([bad.requests.length, good.requests.length]).toEqual([1, 1]);
      expect(stateOf(pump, bad.baseUrl)).toMatchObject({ healthy: false, failures: 1 });
      expect(stateOf(pump, good.baseUrl)).toMatchObject({ healthy: true, accepted: 1 });
    }
  });

  it('moves on from a replica that failed the request with a 500 that says why, without resting it (the request may be the cause)', async () => {
    const bad = await failing(500);
    const good = await live();
    const pump = createChatCompletionPump({ baseUrl: [bad.baseUrl, good.baseUrl] });
    const { error, parts } = await run(pump, { baseUrl: bad.baseUrl });
    expect(error).toBeUndefined();
    expect(parts).toEqual(expectedPlainParts);
    expect(stateOf(pump, bad.baseUrl)).toMatchObject({ healthy: true, failures: 0 });
  });

  it('hands the last replica’s 500 to the caller when every replica answers it, each tried once', async () => {
    const first = await failing(500);
    const second = await failing(500);
    const pump = createChatCompletionPump({ baseUrl: [first.baseUrl, second.baseUrl] });
    const { error } = await run(pump, { baseUrl: first.baseUrl });
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect((error as UpstreamResponseError).status).toBe(500);
    expect([first.requests.length, second.requests.length]).toEqual([1, 1]);
  });

  // A failure after the first token ends the stream: failover-after-accept.test.ts.

  it('fails with the last replica’s error once every replica has failed, each tried once', async () => {
    const dead = await deadUrl();
    const bad = await failing(502);
    const pump = createChatCompletionPump({ baseUrl: [dead, bad.baseUrl] });
    const { error } = await run(pump, { baseUrl: dead });
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect((error as UpstreamResponseError).status).toBe(502);
    expect(bad.requests).toHaveLength(1);
    expect(pump.replicas!.states().map((s) => s.healthy)).toEqual([false, false]);

    // All resting: a request still goes out (the one back first, then the other) rather than being refused.
    const again = await run(pump);
    expect((again.error as UpstreamResponseError).status).toBe(502);
    expect(bad.requests).toHaveLength(2);
    expect(pump.replicas!.states().map((s) => s.consecutiveFailures)).toEqual([2, 2]);
  });

  it('stops when the caller aborts before any replica has answered, without trying another', async () => {
    const silent = await track(startTestUpstream(() => {}));
    const good = await live();
    const pump = createChatCompletionPump({ baseUrl: [silent.baseUrl, good.baseUrl] });
    const controller = new AbortController();
    const reason = new ClientAbortedError();
    const pending = run(pump, { baseUrl: silent.baseUrl }, controller.signal);
    while (silent.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort(reason);
    const { error } = await pending;
    expect(error).toBe(reason);
    expect(good.requests).toHaveLength(0);
    await silent.requestSocketClosed(0);
  });

  it('moves on when a replica has not even answered by the first-token deadline, shorter than its headers timeout', async () => {
    const silent = await track(startTestUpstream(() => {}));
    const good = await live();
    const timeouts = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 200, idleMs: 10_000 };
    const pump = createChatCompletionPump({ baseUrl: [silent.baseUrl, good.baseUrl], timeouts });
    const { parts, error } = await run(pump, { baseUrl: silent.baseUrl });
    expect(error).toBeUndefined();
    expect(parts).toEqual(expectedPlainParts);
    expect(stateOf(pump, silent.baseUrl).healthy).toBe(false);
    await silent.requestSocketClosed(0);
  });

  it('gives the replica it fails over to a whole first-token wait of its own: the deadline is per attempt', async () => {
    const silent = await track(startTestUpstream(() => {}));
    // Its first token comes within the wait from its own start, not within one from the request's:
    // 200 ms into a 1 s wait (with 400 a loaded machine's slow failover ate most of the margin),
    // and 1.2 s after the request's start, which a deadline per request would have cut.
    const slowPrefill = await track(
      startTestUpstream(async (_req, res) => {
        sseHeaders(res);
        await pause(200);
        res.end(plainContentStream);
      }),
    );
    const timeouts = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 1_000, idleMs: 10_000 };
    const pump = createChatCompletionPump({ baseUrl: [silent.baseUrl, slowPrefill.baseUrl], timeouts });
    const { parts, error } = await run(pump, { baseUrl: silent.baseUrl });
    expect(error).toBeUndefined();
    expect(parts).toEqual(expectedPlainParts);
    expect(stateOf(pump, silent.baseUrl).healthy).toBe(false);
  });

  it('counts totalMs from the request’s start, failover included (regression: each attempt restarted it)', async () => {
    const refusesLate = await track(
      startTestUpstream(async (_req, res) => {
        await pause(700);
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(JSON.stringify(modelNotFoundBody));
      }),
    );
    // Done 1 s after its own start: inside totalMs of its own, past the request's (1.7 s). Its
    // first token, about 700 ms into the request, leaves 700 ms of totalMs for a loaded machine.
    const streaming = await track(
      startTestUpstream(async (_req, res) => {
        sseHeaders(res);
        for (let i = 0; i < 50 && !res.destroyed; i++) {
          res.write(vllmChunk({ content: `t${i} ` }));
          await pause(20);
        }
        res.end('data: [DONE]\n\n');
      }),
    );
    const timeouts = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 10_000, idleMs: 10_000, totalMs: 1_400 };
    const pump = createChatCompletionPump({ baseUrl: [refusesLate.baseUrl, streaming.baseUrl], timeouts });
    const { parts, error, accepted } = await run(pump, { baseUrl: refusesLate.baseUrl });
    expect(error).toBeInstanceOf(UpstreamTotalTimeoutError);
    expect(accepted).toHaveLength(1);
    expect(parts[0]?.type).toBe('start');
    expect(parts.some((p) => p.type === 'content')).toBe(true);
    expect(parts.some((p) => p.type === 'end')).toBe(false);
    expect(stateOf(pump, refusesLate.baseUrl).healthy).toBe(false);
    // The request's deadline ran out on it, through no fault of its own.
    expect(stateOf(pump, streaming.baseUrl)).toMatchObject({ healthy: true, accepted: 1, failures: 0 });
  });

  // Review: totalMs running out while a 503's body was still being read reported the body's error,
  // as it should (it says more than the clock), but as the replica's failure: the next replica was
  // tried with none of the request's time left, and its own total deadline fired at once.
  it('tries no other replica when totalMs runs out while an error answer\'s body is read: the body\'s error is final', async () => {
    const slowErrorBody = await track(
      startTestUpstream((_req, res) => {
        res.writeHead(503, { 'content-type': 'application/json' });
        // The rest never comes (ERROR_BODY_WAIT_MS is 2 s, totalMs below much less).
        res.write('{"error": {"message": "engine overloaded", ');
      }),
    );
    const good = await live();
    const timeouts = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 10_000, idleMs: 10_000, totalMs: 300 };
    const pump = createChatCompletionPump({ baseUrl: [slowErrorBody.baseUrl, good.baseUrl], timeouts });
    const { parts, error } = await run(pump, { baseUrl: slowErrorBody.baseUrl });
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ status: 503 });
    expect(parts).toEqual([]);
    expect(good.requests).toHaveLength(0);
    // The 503 is still the replica's: its status line came before the clock ran out, and says the
    // same of it as a 503 whose body ended in time (regression: the deadline made it count for none).
    expect(stateOf(pump, slowErrorBody.baseUrl)).toMatchObject({ healthy: false, failures: 1 });
  });

  it('sends one URL through the plain pump: no replica bookkeeping', () => {
    expect(createChatCompletionPump({ baseUrl: 'http://127.0.0.1:9/v1' }).replicas).toBeUndefined();
    expect(createChatCompletionPump({ baseUrl: ['http://127.0.0.1:9/v1'] }).replicas).toBeUndefined();
  });
});
