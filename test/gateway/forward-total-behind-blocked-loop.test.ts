import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../gateway/server.ts';
import { closedAfterEach } from '../support/closed-after-each.ts';
import { startHeldUpstream, stopHeldUpstreams } from '../llm-client/held-upstream.ts';

// 1 s: the head and first event, sent at once, reach the client well before it on a loaded machine.
const TOTAL_MS = 1_000;

// Review: the forward route bounded a request by totalMs with a timer of its own, which aborted
// the request in the timers phase, before the poll phase read the socket: behind an event loop
// blocked past totalMs (a long synchronous task), an answer whose end had come in time was cut.
// A chat stream's total reads what came first (stream-deadlines.ts); forwardRequest's now does too.
describe('a forwarded answer behind an event loop blocked past totalMs', () => {
  const { keep } = closedAfterEach();
  afterEach(stopHeldUpstreams);

  it('is read to its end when its end came in time, not cut', async () => {
    const held = await startHeldUpstream('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream', 'data: {"n":0}\n\n', 'data: [DONE]\n\n');
    const gw = keep(await startGateway({ port: 0, upstream: { baseUrl: held.baseUrl, timeouts: { totalMs: TOTAL_MS } } }, { tools: new Map() }));
    const res = await fetch(`${gw.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"stream":true}' });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let blockedUntilSent = false;
    const error = await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return undefined;
        text += decoder.decode(value, { stream: true });
        // The gateway runs in this process: its loop is blocked too, while the upstream sends the rest.
        if (text.includes('"n":0') && !blockedUntilSent) blockedUntilSent = held.blockUntilSent(TOTAL_MS + 100);
      }
    })().catch((e: unknown) => e);
    expect(blockedUntilSent).toBe(true);
    expect(error).toBeUndefined();
    expect(text).toBe('data: {"n":0}\n\ndata: [DONE]\n\n');
  }, 15_000);
});
