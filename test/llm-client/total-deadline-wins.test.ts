import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { UpstreamFirstTokenTimeoutError, UpstreamTotalTimeoutError, type UpstreamError } from '../../core/errors.ts';
import { StreamDeadlines } from '../../llm-client/stream-deadlines.ts';

const TOTAL_MS = 1_000;
const timeouts = { connectMs: 60_000, headersMs: 60_000, firstTokenMs: 60_000, idleMs: 60_000, totalMs: TOTAL_MS };

/** Blocks the event loop for `ms`, as a long synchronous task in the gateway does. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

function expiry(deadlines: (onExpire: (error: UpstreamError) => void) => StreamDeadlines): Promise<UpstreamError> {
  return new Promise((resolve) => void deadlines(resolve));
}

// Review: behind a loop blocked past both an error body's wait and totalMs, the body's timer,
// due first, fired first: the error answer failed over to another replica with none of the
// request's time left. Once the total has run out, its error is the verdict.
describe('a clock that runs out with the total behind a blocked event loop', () => {
  it("gives the total's error, not an error body's wait's", async () => {
    const error = expiry((onExpire) => {
      const deadlines = new StreamDeadlines(timeouts, onExpire);
      deadlines.start();
      deadlines.bodyDue(200);
      block(TOTAL_MS + 200);
      return deadlines;
    });
    expect(await error).toBeInstanceOf(UpstreamTotalTimeoutError);
  });

  it("gives the total's error, not the first token's", async () => {
    const error = expiry((onExpire) => {
      const deadlines = new StreamDeadlines({ ...timeouts, firstTokenMs: 200 }, onExpire);
      deadlines.start();
      block(TOTAL_MS + 200);
      return deadlines;
    });
    expect(await error).toBeInstanceOf(UpstreamTotalTimeoutError);
  });

  it('still gives the first token its own error while the total has time left', async () => {
    const error = expiry((onExpire) => {
      const deadlines = new StreamDeadlines({ ...timeouts, firstTokenMs: 200, totalMs: 60_000 }, onExpire);
      deadlines.start();
      return deadlines;
    });
    expect(await error).toBeInstanceOf(UpstreamFirstTokenTimeoutError);
  });

  // Review: the total's and the error body's verdicts shared one slot, so when both clocks ran out
  // behind the block the first verdict's handle was lost, and an answer that settled in the poll
  // phase after them (clear()) still got the lost one: an expiry for a stream already done.
  it('gives no verdict once the answer settles, though both clocks ran out behind the block', async () => {
    const expired: UpstreamError[] = [];
    const deadlines = new StreamDeadlines(timeouts, (error) => expired.push(error));
    deadlines.start();
    deadlines.bodyDue(200);
    block(TOTAL_MS + 200);
    // Queued before the clocks' verdicts (their timers run after this synchronous code), as a last
    // read in the poll phase settles the answer before the check phase gives them.
    setImmediate(() => deadlines.clear());
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(expired).toEqual([]);
  });
});
