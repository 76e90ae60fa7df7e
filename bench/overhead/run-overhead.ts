import os from 'node:os';
import { cpusLine } from '../provenance.ts';
import { Agent } from 'undici';
import { summarize, type Summary } from '../stats.ts';
import { OVERHEAD_PROFILE, spawnOurGateway, spawnOverheadSim, type StartedPair } from './bench-servers.ts';
import type { ChildTarget } from './child-target.ts';
import { overheadMarkdown } from './overhead-report.ts';
import { untilQuiet } from './proc-cpu.ts';
import { startPortkey } from './portkey-process.ts';
import { burst, STREAM_TOKENS, type Sample } from './burst.ts';
import type { ChatTarget } from './timed-chat-stream.ts';

export { STREAM_TOKENS };

export const TARGETS = ['direct', 'conveyor', 'baseline', 'portkey'] as const;
export type TargetName = (typeof TARGETS)[number];

export interface OverheadOptions {
  quick?: boolean;
  /** Concurrent streams per level (default 1, 100, 500; quick: 1, 10). */
  concurrency?: number[];
  onProgress?: (done: number, total: number) => void;
  /** Also time our gateway as another version of it has it (`--baseline`): a checkout of this repository. */
  baseline?: { dir: string; label: string };
  /**
   * The simulator's timing profile (`--profile`): a shipped profile's name or a JSON file. Default
   * `bench/overhead/overhead-profile.json`; a GPU-calibrated one (`mistral-7b-h100`) gives the
   * token rate a real model server would send at each concurrency.
   */
  profile?: string;
  /** The command line, under the report's title: the standalone script's, or the `npm run bench` one of a section. */
  command?: string;
  /** A simulator (on `profile`) and our gateway already running: neither is started nor closed here. */
  started?: StartedPair;
}

export interface TargetStats {
  streams: number;
  errors: string[];
  /** Streams that did not deliver exactly STREAM_TOKENS content deltas. */
  shortStreams: number;
  ttftMs: Summary;
  itlMs: Summary;
  tokens: number;
  /** CPU of the process that serves this target (the gateway; for `direct`, the simulator) during its bursts, ms. */
  cpuMs: number;
  cpuMsPer1kTokens: number;
  /** The simulator's CPU during this target's bursts, per 1,000 tokens (the same work for every target). */
  simCpuMsPer1kTokens: number;
  wallMs: number;
}

export interface AddedLatency {
  ttftP50Ms: number;
  ttftP99Ms: number;
  itlP50Ms: number;
  itlP99Ms: number;
}

export interface LevelResult {
  concurrency: number;
  rounds: number;
  /** Streams per target per round (c = 1 runs several one after another). */
  streamsPerRound: number;
  targets: Partial<Record<TargetName, TargetStats>>;
  /** Gateway p50/p99 minus direct p50/p99, same run. */
  added: Partial<Record<Exclude<TargetName, 'direct'>, AddedLatency>>;
}

export interface OverheadJson {
  meta: Record<string, unknown>;
  levels: LevelResult[];
  /** Issue 5's target (reported, never asserted): our added TTFT p50 at 100 streams < 1 ms, and below Portkey's. */
  target: { concurrency: number; conveyorAddedTtftP50Ms: number | null; under1ms: boolean | null; belowPortkey: boolean | null };
}

/**
 * Gateway overhead: the same 200-token plain-text streams sent straight to the simulator, through
 * our gateway and through Portkey, each server in its own process, rounds interleaved (A B C,
 * B C A, C A B …) so machine noise hits every target alike. See bench/README.md "Gateway overhead".
 */
export async function runOverhead(o: OverheadOptions = {}): Promise<{ markdown: string; json: OverheadJson }> {
  const quick = o.quick ?? false;
  const levels = o.concurrency ?? (quick ? [1, 10] : [1, 100, 500]);
  const sim = o.started?.sim ?? (await spawnOverheadSim(o.profile));
  const servers: ChildTarget[] = [sim];
  try {
    const [ours, before, portkey] = await Promise.all([
      o.started?.conveyor ?? spawnOurGateway(sim.url),
      o.baseline ? spawnOurGateway(sim.url, o.baseline.dir) : undefined,
      startPortkey(sim.url),
    ]);
    servers.push(ours);
    if (before) servers.push(before);
    if (!('error' in portkey)) servers.push(portkey);
    const agent = () => new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 });
    const targets: Array<{ name: TargetName; chat: ChatTarget; process: ChildTarget }> = [
      { name: 'direct', chat: { url: sim.url, dispatcher: agent() }, process: sim },
      { name: 'conveyor', chat: { url: ours.url, dispatcher: agent() }, process: ours },
    ];
    if (before) targets.push({ name: 'baseline', chat: { url: before.url, dispatcher: agent() }, process: before });
    if (!('error' in portkey)) targets.push({ name: 'portkey', chat: { url: portkey.url, headers: portkey.headers, dispatcher: agent() }, process: portkey });

    const plan = levels.map((c) => ({ concurrency: c, ...roundsFor(c, quick) }));
    const total = targets.length * (1 + plan.reduce((s, p) => s + p.rounds, 0));
    let done = 0;
    const tick = () => o.onProgress?.(++done, total);

    // Warm-up (not recorded): JIT, connection pools, the simulator's tokenizer caches.
    for (const t of targets) {
      await burst(t.chat, 10, 1, sim, t.process);
      tick();
    }
    // The servers' start-up work (our gateway's thread workers load their plugins, ~2 s of CPU
    // after "listening") must not land in the first level's CPU per token.
    // One still busy after untilQuiet's 20 s is measured anyway, and named in the report.
    const settled = await Promise.all(servers.map((server) => untilQuiet(() => server.cpuMs())));
    const unsettled = servers.filter((_, i) => !settled[i]).map((server) => server.name);
    const results: LevelResult[] = [];
    for (const p of plan) {
      const samples = new Map<TargetName, Sample[]>(targets.map((t) => [t.name, []]));
      for (let round = 0; round < p.rounds; round++) {
        for (let i = 0; i < targets.length; i++) {
          const t = targets[(round + i) % targets.length]!;
          samples.get(t.name)!.push(await burst(t.chat, p.concurrency, p.perSlot, sim, t.process));
          tick();
        }
      }
      results.push(levelResult(p.concurrency, p.rounds, p.perSlot * p.concurrency, samples));
    }
    await Promise.all(targets.map((t) => t.chat.dispatcher.close()));

    const at = results.find((r) => r.concurrency === 100) ?? results[results.length - 1]!;
    const ourAdded = at.added.conveyor?.ttftP50Ms;
    const theirs = at.added.portkey?.ttftP50Ms;
    const json: OverheadJson = {
      meta: {
        date: new Date().toISOString(),
        node: process.version,
        cpus: cpusLine(),
        loadavg: os.loadavg().map((v) => Number(v.toFixed(2))),
        profile: o.profile ?? OVERHEAD_PROFILE.replace(/^.*\/bench\//, 'bench/'),
        streamTokens: STREAM_TOKENS,
        portkey: 'error' in portkey ? { error: portkey.error } : { version: portkey.version, mode: 'NODE_ENV=production --headless, openai provider + x-portkey-custom-host' },
        quick,
        baseline: o.baseline?.label ?? null,
        unsettled,
      },
      levels: results,
      target: {
        concurrency: at.concurrency,
        conveyorAddedTtftP50Ms: finiteOrNull(ourAdded),
        under1ms: ourAdded === undefined || !Number.isFinite(ourAdded) ? null : ourAdded < 1,
        belowPortkey: ourAdded === undefined || theirs === undefined || !Number.isFinite(theirs) ? null : ourAdded < theirs,
      },
    };
    return { markdown: overheadMarkdown(json, o.command), json };
  } finally {
    await Promise.all(servers.filter((s) => s !== o.started?.sim && s !== o.started?.conveyor).map((s) => s.close()));
  }
}

function roundsFor(concurrency: number, quick: boolean): { rounds: number; perSlot: number } {
  // c = 1: several streams back to back for enough TTFT samples (one per stream).
  if (concurrency === 1) return quick ? { rounds: 2, perSlot: 1 } : { rounds: 3, perSlot: 4 };
  // The figure (added TTFT p50 at 100 streams) moves by tenths of a millisecond from one
  // round to the next on this shared box: eight rounds of 100 streams make its median steady.
  if (concurrency <= 100) return { rounds: quick ? 2 : concurrency === 100 ? 8 : 3, perSlot: 1 };
  return { rounds: 1, perSlot: 1 };
}

function levelResult(concurrency: number, rounds: number, streamsPerRound: number, samples: Map<TargetName, Sample[]>): LevelResult {
  const targets: LevelResult['targets'] = {};
  for (const [name, list] of samples) {
    const timings = list.flatMap((s) => s.timings);
    const tokens = list.reduce((n, s) => n + s.tokens, 0);
    const cpuMs = list.reduce((n, s) => n + s.cpuMs, 0);
    const simCpuMs = list.reduce((n, s) => n + s.simCpuMs, 0);
    targets[name] = {
      streams: timings.length,
      errors: list.flatMap((s) => s.errors).slice(0, 5),
      shortStreams: timings.filter((t) => t.tokens !== STREAM_TOKENS).length,
      ttftMs: summarize(timings.map((t) => t.ttftMs)),
      itlMs: summarize(timings.flatMap((t) => t.itlMs)),
      tokens,
      cpuMs,
      cpuMsPer1kTokens: (cpuMs / tokens) * 1000,
      simCpuMsPer1kTokens: (simCpuMs / tokens) * 1000,
      wallMs: list.reduce((n, s) => n + s.wallMs, 0),
    };
  }
  const added: LevelResult['added'] = {};
  const direct = targets.direct;
  for (const name of ['conveyor', 'baseline', 'portkey'] as const) {
    const via = targets[name];
    if (!direct || !via) continue;
    added[name] = {
      ttftP50Ms: via.ttftMs.p50 - direct.ttftMs.p50,
      ttftP99Ms: via.ttftMs.p99 - direct.ttftMs.p99,
      itlP50Ms: via.itlMs.p50 - direct.itlMs.p50,
      itlP99Ms: via.itlMs.p99 - direct.itlMs.p99,
    };
  }
  return { concurrency, rounds, streamsPerRound, targets, added };
}

function finiteOrNull(v: number | undefined): number | null {
  return v !== undefined && Number.isFinite(v) ? v : null;
}
