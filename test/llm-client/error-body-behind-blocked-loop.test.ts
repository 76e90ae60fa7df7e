import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { UpstreamResponseError } from '../../core/errors.ts';
import { closeUpstreamPools, pumpChatCompletion } from '../../llm-client/index.ts';
import { ERROR_BODY_WAIT_MS } from '../../llm-client/upstream-response-error.ts';
import { MODEL } from './fixtures/vllm-streams.ts';
import { startHeldUpstream, stopHeldUpstreams } from './held-upstream.ts';
import { startTestUpstream, type TestUpstream } from './upstream-test-server.ts';

const generous = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 10_000, idleMs: 10_000 };
const request = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const upstreams: TestUpstream[] = [];
afterEach(async () => {
  stopHeldUpstreams();
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});
afterAll(closeUpstreamPools);

// Review: the total deadline (and an error answer's own body wait) fired in the timers phase,
// before the poll phase read the socket, so an error body that had all come while the loop was
// blocked (a long synchronous task) was judged by the read before the block: the 500 failed with
// its JSON cut mid-message, or as upstream_total_timeout when the status line was unread too.
describe.each([
  { wait: 'totalMs', timeouts: { totalMs: 300 }, blockMs: 300 },
  { wait: "the error body's own wait", timeouts: {}, blockMs: ERROR_BODY_WAIT_MS },
])('an error answer whose body came while the event loop was blocked past $wait', ({ timeouts, blockMs }) => {
  it('reads the body in the socket buffer before the deadline fails it: the 500 with its whole message', async () => {
    const server = await startHeldUpstream(
      'HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json',
      '{"error": {"message": "engine',
      ' overloaded", "type": "InternalServerError", "code": 500}}',
    );
    const stream = pumpChatCompletion(
      { baseUrl: server.baseUrl, body: request, signal: new AbortController().signal, timeouts: { ...generous, ...timeouts } },
      () => {},
    );
    // Blocked from an I/O callback (the poll phase), as a consumer's part handler is: the timers phase
    // comes next, before the poll phase reads again. (A timer callback that blocks would not do: the
    // timers phase goes on with the clock it read before it, and the total is not yet due by that.)
    await server.ready;
    // The loop is blocked from here until the rest is in the socket buffer and the wait has run out.
    expect(server.blockUntilSent(blockMs + 50)).toBe(true);

    const error = await stream.done.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ code: 'upstream_response_error', status: 500, message: 'engine overloaded' });
  });
});

describe('an error answer whose body drips on and never ends', () => {
  it('settles when totalMs runs out, with the status and what came of the body', async () => {
    const drip = await startTestUpstream((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.write('engine overloaded');
      const timer = setInterval(() => res.write('.'), 20);
      res.on('close', () => clearInterval(timer));
    });
    upstreams.push(drip);
    const stream = pumpChatCompletion(
      { baseUrl: drip.baseUrl, body: request, signal: new AbortController().signal, timeouts: { ...generous, totalMs: 300 } },
      () => {},
    );
    const error = await stream.done.then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'upstream_response_error', status: 500, message: expect.stringMatching(/^engine overloaded\.*$/) });
    // The total ran out: no replica is to be tried next with none of the request's time left (failover-stream.ts).
    expect(stream.interrupted).toBe(true);
    await drip.requestSocketClosed(0);
  });
});
