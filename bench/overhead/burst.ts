import { setMaxListeners } from 'node:events';
import { SIM_MODEL } from './bench-servers.ts';
import type { ChildTarget } from './child-target.ts';
import { timedChatStream, type ChatTarget, type StreamTiming } from './timed-chat-stream.ts';

export const STREAM_TOKENS = 200;

export interface Sample {
  timings: StreamTiming[];
  errors: string[];
  /** Tokens the simulator generated in the window (recorded, phase and filler streams). */
  tokens: number;
  cpuMs: number;
  simCpuMs: number;
  wallMs: number;
}

const REQUEST = JSON.stringify({
  model: SIM_MODEL,
  stream: true,
  max_tokens: STREAM_TOKENS,
  messages: [{ role: 'user', content: 'overhead-bench-plain: write a paragraph about gateways.' }],
});

const plainRequest = (maxTokens: number) => REQUEST.replace(`"max_tokens":${STREAM_TOKENS}`, `"max_tokens":${maxTokens}`);

/**
 * `concurrency` streams in flight at all times (closed loop), with arrivals spread evenly over a
 * stream's lifetime, as in steady-state serving — not a thundering herd, whose TTFT would measure
 * admission queueing. Slot i first runs an unrecorded stream of 200 + 1 + i·200/c tokens (the
 * simulator emits one token per step for every sequence, so the slots' recorded streams then
 * start i·200/c steps apart). The extra 200 tokens keep every recorded stream clear of the burst's
 * own start, where all the slots connect and prefill at once: without them the first slots' TTFT
 * measured that herd (the p99 outliers sat within 150 ms of the burst's start, direct and through
 * a gateway alike). After its recorded streams a slot keeps the load up with unrecorded streams
 * until every slot is done. Wall time covers the burst up to the last recorded token; CPU and
 * tokens cover it up to the moment the simulator is idle again, fillers' ends included (below).
 */
export async function burst(chat: ChatTarget, concurrency: number, perSlot: number, sim: ChildTarget, server: ChildTarget): Promise<Sample> {
  const timings: StreamTiming[] = [];
  const errors: string[] = [];
  const fillers = new AbortController();
  // One signal shared by every filler stream of the burst, on purpose.
  setMaxListeners(0, fillers.signal);
  let left = concurrency * perSlot;
  let allDone!: () => void;
  const finished = new Promise<void>((resolve) => (allDone = resolve));
  // The CPU per 1,000 tokens divides one count by the other, so both are read at a moment when the
  // simulator generates nothing: at either end of the burst, once it is idle. The CPU used to be
  // read as the last recorded stream ended and the token count a round trip later, while the
  // fillers still ran: that round trip's tokens were counted and their CPU was not, so every
  // target's CPU per token (the gateway's most, at 100 and 500 streams) came out low.
  const tokens0 = await idleSimTokens(sim);
  const cpu0 = server.cpuMs();
  const simCpu0 = sim.cpuMs();
  const t0 = performance.now();

  const slot = async (i: number) => {
    // Unrecorded, and only there to stagger the starts: a failure here (a keep-alive socket the
    // server closed just as it was reused) must not keep the slot from its recorded streams,
    // whose count ends the burst.
    const lead = concurrency > 1 ? STREAM_TOKENS : 0;
    await timedChatStream(chat, plainRequest(lead + 1 + Math.floor((i * STREAM_TOKENS) / concurrency))).catch(() => undefined);
    for (let k = 0; k < perSlot; k++) {
      try {
        timings.push(await timedChatStream(chat, REQUEST));
      } catch (err) {
        errors.push((err as Error).message);
      }
      if (--left === 0) allDone();
    }
    while (left > 0) await timedChatStream(chat, REQUEST, fillers.signal).catch(() => undefined);
  };
  const slots = Promise.allSettled(Array.from({ length: concurrency }, (_, i) => slot(i)));
  await finished;
  const wallMs = performance.now() - t0;
  fillers.abort();
  await slots;
  const tokens = (await idleSimTokens(sim)) - tokens0;
  return { timings, errors, cpuMs: server.cpuMs() - cpu0, simCpuMs: sim.cpuMs() - simCpu0, wallMs, tokens };
}

/** How long to wait for the simulator to drop the aborted fillers before counting anyway. */
const IDLE_WAIT_MS = 10_000;

/**
 * Tokens the simulator has generated so far (the same count for every target, whatever reached the
 * client), read once it runs and queues no sequence: an aborted stream stays in its batch until the
 * next step, and a gateway passes the abort on a little later still.
 */
async function idleSimTokens(sim: ChildTarget): Promise<number> {
  const started = performance.now();
  for (;;) {
    const res = await fetch(`${sim.url.replace(/\/v1$/, '')}/sim/counters`);
    const counters = (await res.json()) as { tokensGenerated: number; running: number; waiting: number };
    if (counters.running + counters.waiting === 0 || performance.now() - started > IDLE_WAIT_MS) return counters.tokensGenerated;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
