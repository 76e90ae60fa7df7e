import { describe, expect, it } from 'vitest';
import { createChatCompletionPump } from '../../llm-client/index.ts';
import { plainContentStream, vllmChunk } from './fixtures/vllm-streams.ts';
import { replicaState, runPump } from './replica-pump-run.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { sseHeaders, startSseUpstream, startTestUpstream } from './upstream-test-server.ts';

const track = trackedUpstreams();

/**
 * A replica that accepts every stream and fails it before any token with vLLM's error event (an
 * engine that breaks inside each request): "busy", the request's fault as far as one failure shows.
 */
const failingInStream = () =>
  track(
    startTestUpstream((_req, res) => {
      sseHeaders(res);
      // vLLM (up to 0.11) gives every exception in a stream its defaults: code 400, BadRequestError.
      const error = { error: { object: 'error', message: 'CUDA error: an illegal memory access was encountered', type: 'BadRequestError', param: null, code: 400 } };
      res.end(`${vllmChunk({ role: 'assistant', content: '' })}data: ${JSON.stringify(error)}\n\ndata: [DONE]\n\n`);
    }),
  );

describe('a replica that fails stream after stream inside it, before any token', () => {
  it('rests once it has failed three streams in a row that another replica then served', async () => {
    const bad = await failingInStream();
    const good = await track(startSseUpstream(plainContentStream));
    const pump = createChatCompletionPump({ baseUrl: [bad.baseUrl, good.baseUrl] });
    for (let i = 1; i <= 3; i++) {
      // Each conversation starts on the bad replica (its affinity), and moves on to the good one.
      expect((await runPump(pump, { baseUrl: bad.baseUrl })).error).toBeUndefined();
      expect(replicaState(pump, bad.baseUrl).healthy).toBe(i < 3);
    }
    expect(replicaState(pump, bad.baseUrl)).toMatchObject({ state: 'resting', failures: 1 });
    // Resting, it is not tried first any more: new conversations go straight to the good one.
    await runPump(pump, { baseUrl: bad.baseUrl });
    expect([bad.requests.length, good.requests.length]).toEqual([3, 4]);
  });

  it('stays healthy when the streams fail on every replica: then they are the requests’ own doing', async () => {
    const first = await failingInStream();
    const second = await failingInStream();
    const pump = createChatCompletionPump({ baseUrl: [first.baseUrl, second.baseUrl] });
    for (let i = 0; i < 4; i++) expect((await runPump(pump, { baseUrl: first.baseUrl })).error).toBeDefined();
    expect([replicaState(pump, first.baseUrl).healthy, replicaState(pump, second.baseUrl).healthy]).toEqual([true, true]);
  });

  it('starts its count again after a stream of its own', async () => {
    let failNext = true;
    const flaky = await track(
      startTestUpstream((_req, res) => {
        sseHeaders(res);
        const fail = failNext;
        failNext = !failNext;
        const error = { error: { object: 'error', message: 'one bad request', type: 'BadRequestError', param: null, code: 400 } };
        res.end(fail ? `data: ${JSON.stringify(error)}\n\ndata: [DONE]\n\n` : plainContentStream);
      }),
    );
    const good = await track(startSseUpstream(plainContentStream));
    const pump = createChatCompletionPump({ baseUrl: [flaky.baseUrl, good.baseUrl] });
    // Fail, serve, fail, serve…: never three failures in a row.
    for (let i = 0; i < 6; i++) expect((await runPump(pump, { baseUrl: flaky.baseUrl })).error).toBeUndefined();
    expect(replicaState(pump, flaky.baseUrl)).toMatchObject({ healthy: true, accepted: 3 });
  });
});
