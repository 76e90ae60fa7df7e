import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { UpstreamTotalTimeoutError } from '../../core/errors.ts';
import { forwardConnection, forwardRequest, type ForwardedRequest, type ForwardSink } from '../../llm-client/forward-request.ts';
import { closeUpstreamPools } from '../../llm-client/index.ts';
import { startHeldUpstream, stopHeldUpstreams } from './held-upstream.ts';
import { startEndlessUpstream, type TestUpstream } from './upstream-test-server.ts';

// 1 s: the head and first read, sent at once, come well before it on a loaded machine.
const TOTAL_MS = 1_000;
const timeouts = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 10_000, idleMs: 10_000, totalMs: TOTAL_MS };

let endless: TestUpstream | undefined;
afterEach(async () => {
  await endless?.close();
  endless = undefined;
  stopHeldUpstreams();
});
afterAll(closeUpstreamPools);

const post = (extra: Partial<ForwardedRequest> = {}): ForwardedRequest => ({
  method: 'POST',
  endpoint: '/completions',
  query: '',
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{"prompt":"hi","stream":true}'),
  signal: new AbortController().signal,
  ...extra,
});

/** The exchange's outcome: undefined when it resolved. */
const outcome = (done: Promise<void>): Promise<unknown> => done.then(() => undefined, (e: unknown) => e);

function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

// Review: forwardRequest ignored upstream.timeouts.totalMs; only the forward route's own abort
// bounded it, which cut an answer whose end had come in time behind a blocked event loop.
describe('forwardRequest and totalMs', () => {
  it('cuts an answer still streaming when totalMs runs out, with UpstreamTotalTimeoutError', async () => {
    endless = await startEndlessUpstream();
    const received: Buffer[] = [];
    const statuses: number[] = [];
    const sink: ForwardSink = { head: (status) => void statuses.push(status), body: (chunk) => received.push(chunk) > 0 };
    const error = await outcome(forwardRequest(forwardConnection({ baseUrl: endless.baseUrl, timeouts }), post(), sink).done);
    expect(error).toBeInstanceOf(UpstreamTotalTimeoutError);
    expect(statuses).toEqual([200]);
    expect(Buffer.concat(received).toString()).toContain('t0 ');
    await endless.requestSocketClosed(0);
  }, 10_000);

  it("counts from the request's first attempt (startedAt): a later attempt gets what is left", async () => {
    endless = await startEndlessUpstream();
    const sink: ForwardSink = { head: () => {}, body: () => true };
    const startedAt = performance.now() - 60_000;
    const error = await outcome(forwardRequest(forwardConnection({ baseUrl: endless.baseUrl, timeouts }), post({ startedAt }), sink).done);
    expect(error).toBeInstanceOf(UpstreamTotalTimeoutError);
  }, 10_000);

  it('reads the end of an answer that came in time while the event loop was blocked past totalMs', async () => {
    const held = await startHeldUpstream('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream', 'data: a\n\n', 'data: b\n\n');
    const received: Buffer[] = [];
    let blockedUntilSent = false;
    const sink: ForwardSink = {
      head: () => {},
      body(chunk) {
        // The rest of the answer, its end included, comes while the loop is blocked past totalMs.
        if (received.push(chunk) === 1) blockedUntilSent = held.blockUntilSent(TOTAL_MS + 100);
        return true;
      },
    };
    const error = await outcome(forwardRequest(forwardConnection({ baseUrl: held.baseUrl, timeouts }), post(), sink).done);
    expect(blockedUntilSent).toBe(true);
    expect(error).toBeUndefined();
    expect(Buffer.concat(received).toString()).toBe('data: a\n\ndata: b\n\n');
  }, 15_000);

  it("fails as the total, not the body timeout, when the loop was blocked past both while an error answer's body was read", async () => {
    // A 503 whose body never ends: its rest waits for blockUntilSent, never called here.
    const held = await startHeldUpstream('HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json', '{"error":', '');
    const sink: ForwardSink = { head: () => block(TOTAL_MS + 300), body: () => true };
    const short = { ...timeouts, firstTokenMs: 200, idleMs: 200 };
    const error = await outcome(forwardRequest(forwardConnection({ baseUrl: held.baseUrl, timeouts: short }), post(), sink).done);
    // Before: UpstreamIdleTimeoutError, which the forward route fails over on, to a replica with no time left.
    expect(error).toBeInstanceOf(UpstreamTotalTimeoutError);
  }, 15_000);
});
