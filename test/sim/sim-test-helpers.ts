import type { EngineClock } from '../../sim/engine-clock.ts';
import type { Scenario } from '../../sim/scenario-schema.ts';
import type { SimCounters } from '../../sim/sim-server.ts';

/** POSTs a chat completion body as JSON to the simulator at `baseUrl` (ending in /v1). */
export function postChat(baseUrl: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...init,
  });
}

/** Reads an SSE body event by event, yielding each event's data payload. */
export async function* sseData(response: Response): AsyncGenerator<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      yield data;
    }
  }
  if (buffer.trim().length > 0) throw new Error(`stream ended inside an event: ${JSON.stringify(buffer)}`);
}

/** All data payloads of a finished stream. */
export async function allSseData(response: Response): Promise<string[]> {
  const out: string[] = [];
  for await (const data of sseData(response)) out.push(data);
  return out;
}

/** Concatenated delta contents of parsed chunks. */
export function streamedText(payloads: readonly string[]): string {
  return payloads
    .filter((p) => p !== '[DONE]')
    .map((p) => JSON.parse(p) as { choices: Array<{ delta: { content?: string } }> })
    .map((c) => c.choices[0]?.delta.content ?? '')
    .join('');
}

/** Polls `read` until `done` holds, for counters that change at the engine's next step. */
export async function waitForCounters(
  read: () => SimCounters,
  done: (c: SimCounters) => boolean,
  timeoutMs = 5000,
): Promise<SimCounters> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = read();
    if (done(c)) return c;
    if (Date.now() > deadline) throw new Error(`counters never reached the expected state: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A scenario whose single rule answers `reply` to every conversation. */
export function fixedReplyScenario(name: string, reply: string): Scenario {
  return { name, rules: [{ when: {}, reply }] };
}

/** A reply of `count` short words (a couple of tokens each): long enough to overlap others. */
export function longReply(count: number, word = 'tick'): string {
  return Array.from({ length: count }, (_, i) => `${word}${i % 10}`).join(' ');
}

/** A hand-driven EngineClock: timers fire only when the test advances time. */
export class ManualClock implements EngineClock {
  private t = 0;
  private timers: Array<{ at: number; fn: () => void; cancelled: boolean }> = [];

  now(): number {
    return this.t;
  }

  runAt(atMs: number, fn: () => void): () => void {
    const timer = { at: atMs, fn, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Times of the timers still pending. */
  pending(): number[] {
    return this.timers.filter((t) => !t.cancelled).map((t) => t.at);
  }

  /** Moves time to `t`, running due timers in time order; `lateByMs` makes each one fire late. */
  advanceTo(t: number, lateByMs = 0): void {
    for (;;) {
      const due = this.timers
        .filter((x) => !x.cancelled && x.at + lateByMs <= t)
        .sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = Math.max(this.t, due.at + lateByMs);
      due.fn();
    }
    this.t = Math.max(this.t, t);
  }

  /** Fires only the next pending timer, `lateByMs` after its target. */
  fireNext(lateByMs = 0): void {
    const next = this.timers.filter((x) => !x.cancelled).sort((a, b) => a.at - b.at)[0];
    if (next === undefined) throw new Error('no timer pending');
    this.timers = this.timers.filter((x) => x !== next);
    this.t = Math.max(this.t, next.at + lateByMs);
    next.fn();
  }
}
