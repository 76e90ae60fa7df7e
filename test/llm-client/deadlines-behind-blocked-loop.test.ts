import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeUpstreamPools, pumpChatCompletion, type UpstreamPart } from '../../llm-client/index.ts';
import { MODEL, START, vllmChunk } from './fixtures/vllm-streams.ts';
import { startHeldUpstream, stopHeldUpstreams } from './held-upstream.ts';

const DEADLINE_MS = 150;
const generous = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 10_000, idleMs: 10_000 };
const role = vllmChunk({ role: 'assistant', content: '' });
const rest = vllmChunk({ content: 'b' }) + vllmChunk({}, 'stop') + 'data: [DONE]\n\n';
afterEach(stopHeldUpstreams);
afterAll(closeUpstreamPools);

// Review: a phase's timer fires in the timers phase, before the poll phase reads the socket, so a
// token that arrived in time while the gateway's loop was busy (a long synchronous task) was not
// yet read when the timer looked, and the stream failed as idle (or without a first token) though
// the upstream never was.
describe.each([
  // Held: 'a', the first token; 'b' comes while the loop is blocked past the idle deadline.
  { deadline: 'idle', timeouts: { idleMs: DEADLINE_MS }, first: role + vllmChunk({ content: 'a' }), second: rest, holdOn: 'a' },
  // Held: the role chunk (no token yet); 'a' comes while the loop is blocked past the first-token deadline.
  { deadline: 'first-token', timeouts: { firstTokenMs: DEADLINE_MS }, first: role, second: vllmChunk({ content: 'a' }) + rest, holdOn: 'start' },
  // Held: 'a'; the rest of the answer, its finish included, comes while the loop is blocked past totalMs (from the request's start).
  { deadline: 'total', timeouts: { totalMs: DEADLINE_MS }, first: role + vllmChunk({ content: 'a' }), second: rest, holdOn: 'a' },
])('the $deadline deadline behind a blocked event loop', ({ timeouts, first, second, holdOn }) => {
  it('reads the chunk already in the socket buffer before calling the deadline missed', async () => {
    const server = await startHeldUpstream('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream', first, second);

    const parts: UpstreamPart[] = [];
    let blockedUntilSent = true;
    const stream = pumpChatCompletion(
      {
        baseUrl: server.baseUrl,
        body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }] },
        signal: new AbortController().signal,
        timeouts: { ...generous, ...timeouts },
      },
      (part) => {
        parts.push(part);
        if (part.type !== holdOn && !(part.type === 'content' && part.text === holdOn)) return;
        // The loop is blocked from here until `second` is in the socket buffer and the deadline
        // (first token: from the request's start; idle: from 'a') has passed.
        blockedUntilSent = server.blockUntilSent(DEADLINE_MS + 50);
      },
    );
    const error = await stream.done.then(() => undefined, (e: unknown) => e);
    expect(blockedUntilSent).toBe(true);
    expect(error).toBeUndefined();
    expect(parts.filter((p) => p.type !== 'usage')).toEqual([
      START,
      { type: 'content', text: 'a' },
      { type: 'content', text: 'b' },
      expect.objectContaining({ type: 'finish' }),
      { type: 'end' },
    ]);
  });
});
