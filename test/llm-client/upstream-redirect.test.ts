import { describe, expect, it } from 'vitest';
import { toErrorResponse } from '../../gateway/error-response.ts';
import { createChatCompletionPump, listModels, streamChatCompletion } from '../../llm-client/index.ts';
import { expectedPlainParts, MODEL, plainContentStream } from './fixtures/vllm-streams.ts';
import { replicaState, runPump } from './replica-pump-run.ts';
import { trackedUpstreams } from './tracked-upstreams.ts';
import { collect, startSseUpstream, startTestUpstream } from './upstream-test-server.ts';

// Review s42: an upstream reached over plain http behind an ingress or proxy that redirects to
// https (a 301/308 with Location), or on a path that moved, answered every request with a 3xx the
// client read as "upstream answered HTTP 308": where it pointed was nowhere, and with replicas the
// redirecting one was 'final', so each request it drew failed instead of moving to a working replica.

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const track = trackedUpstreams();
const TARGET = 'https://gpu-box.internal.example/v1/chat/completions';

/** An ingress that sends plain http to https: nginx's 308 page, with Location. */
const redirecting = (status = 308) =>
  track(
    startTestUpstream((_req, res) => {
      res.writeHead(status, { location: TARGET, 'content-type': 'text/html' });
      res.end(`<html><head><title>${status} Permanent Redirect</title></head><body><center><h1>${status} Permanent Redirect</h1></center><hr><center>nginx</center></body></html>`);
    }),
  );

describe('an upstream that answers with a redirect', () => {
  it('fails the stream saying where the redirect points, for the log only, and that the gateway does not follow it', async () => {
    const upstream = await redirecting();
    const { parts, error } = await collect(streamChatCompletion({ baseUrl: upstream.baseUrl, body, signal: new AbortController().signal }));
    expect(parts).toEqual([]);
    expect(error).toMatchObject({ code: 'upstream_redirect', status: 308, location: TARGET });
    expect((error as Error).message).toContain(TARGET);
    expect((error as Error).message).toMatch(/does not follow redirects/);
    // The upstream's address is the operator's to know (as a connection error's is), not every client's.
    const answer = toErrorResponse(error);
    expect(answer.status).toBe(502);
    expect(answer.body.error.message).not.toContain('gpu-box');
    expect(answer.body.error.message).toMatch(/redirect/);
  });

  it("says where /models is redirected, so the gateway's start-up check names the fix", async () => {
    const upstream = await redirecting(301);
    const error = await listModels({ baseUrl: upstream.baseUrl }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'upstream_redirect', status: 301, location: TARGET });
  });

  it("is that replica's failure: the stream moves to another replica and the redirecting one rests", async () => {
    const moved = await redirecting();
    const live = await track(startSseUpstream(plainContentStream));
    const pump = createChatCompletionPump({ baseUrl: [moved.baseUrl, live.baseUrl] });
    // Both orders: the least loaded replica is picked in turn.
    for (let i = 0; i < 2; i++) {
      const { parts, error } = await runPump(pump);
      expect(error).toBeUndefined();
      expect(parts).toEqual(expectedPlainParts);
    }
    expect(replicaState(pump, moved.baseUrl)).toMatchObject({ state: 'resting', failures: 1 });
  });
});
