import os from 'node:os';
import { cpusLine } from '../provenance.ts';
import { Agent } from 'undici';
import { summarize, type Summary } from '../stats.ts';
import { parserCpuMarkdown } from './parser-cpu-report.ts';
import { OVERHEAD_PROFILE, SIM_MODEL, spawnOurGateway, spawnOverheadSim, type StartedPair } from './bench-servers.ts';
import type { ChildTarget } from './child-target.ts';
import type { Baseline } from '../git-baseline.ts';
import { baselineRatio, type BaselineRatio } from './parser-cpu-ratio.ts';
import { timedChatStream, type ChatTarget, type StreamTiming } from './timed-chat-stream.ts';

export type ParserMode = 'parse' | 'none';

export interface ParserCpuOptions {
  quick?: boolean;
  /** The command line, under the report's title: the standalone script's, or the `npm run bench` one of a section. */
  command?: string;
  onProgress?: (done: number, total: number) => void;
  /** The simulator's timing profile, as runOverhead's (default bench/overhead/overhead-profile.json). */
  profile?: string;
  /** A simulator (on `profile`) and our gateway already running: neither is started nor closed here. */
  started?: StartedPair;
  /**
   * Also our gateway as of another commit (`--baseline`: a checkout of this repository), on the same
   * simulator, its rounds interleaved with this tree's: the report gives the ratio of the two.
   */
  baseline?: Pick<Baseline, 'dir' | 'label' | 'commit'>;
}

export interface ParserCpuJson extends GatewayCpuFigures {
  meta: Record<string, unknown>;
  requestsPerRound: number;
  concurrency: number;
  /** `--baseline`: the same figures for its gateway, run in the same rounds, on the same simulator. */
  baseline?: GatewayCpuFigures & { label: string; commit: string | null };
  ratio?: BaselineRatio;
}

/** One gateway's figures (this tree's at the top level of ParserCpuJson, a baseline's under `baseline`). */
export interface GatewayCpuFigures {
  /** Gateway CPU per request in each round, µs, per mode (rounds alternate parse/none: A B B A …). */
  perRequestUs: Record<ParserMode, Summary>;
  /** requests = sent; completed = those that completed correctly; perRequestUs NaN where any did not. */
  rounds: RoundCpu[];
  /** parse − none, µs per request: mean of the paired rounds' differences, and its standard error. */
  differenceUs: { mean: number; standardError: number };
  /** Pairs of rounds in no figure: one of the two had a failed request. */
  pairsLeftOut: number;
  /** The difference as a share of the parsing gateway's CPU, and as extra CPU over pass-through, %. */
  shareOfGatewayCpuPct: number;
  extraOverPassThroughPct: number;
  /** Per-request sanity: parse mode saw tool_calls and no content; none mode saw content and no tool_calls. */
  checks: Record<ParserMode, { requests: number; ok: number; errors: string[] }>;
}

export interface RoundCpu { mode: ParserMode; cpuUs: number; requests: number; completed: number; perRequestUs: number }

/**
 * One round's CPU per request, or NaN (no figure, the round and its pair left out) where a request
 * failed: a failed one costs the gateway some CPU, less than a whole stream, and how much is not
 * known. Divided by all sent, such a round read cheaper per request than it was; divided by those
 * that completed, it read dearer, the failed ones' CPU spread over them.
 */
export function roundCpu(mode: ParserMode, cpuUs: number, requests: number, completed: number): RoundCpu {
  return { mode, cpuUs, requests, completed, perRequestUs: completed === requests && requests > 0 ? cpuUs / requests : Number.NaN };
}

/**
 * Each mode's CPU per request and their difference, from the pairs of rounds (runParserCpu runs
 * them two by two, A B then B A) where both rounds have a figure: a round without one leaves its
 * pair out of every figure, so the share of CPU (difference / parse mean) compares one set of
 * pairs. Matched by index within each mode, a parse round whose pass-through pair had no figure
 * still counted in the parse mean.
 */
export function pairedFigures(rounds: readonly RoundCpu[]): { parse: Summary; none: Summary; difference: Summary; pairsLeftOut: number } {
  const all = roundPairs(rounds);
  const kept = all.filter((p) => !Number.isNaN(p.parse) && !Number.isNaN(p.none));
  return {
    parse: summarize(kept.map((p) => p.parse)),
    none: summarize(kept.map((p) => p.none)),
    difference: summarize(kept.map((p) => p.parse - p.none)),
    pairsLeftOut: all.length - kept.length,
  };
}

/** The rounds two by two, as run (A B then B A): each pair's CPU per request by mode, NaN where it has none. */
export function roundPairs(rounds: readonly RoundCpu[]): Array<Record<ParserMode, number>> {
  const pairs: Array<Record<ParserMode, number>> = [];
  for (let i = 0; i + 1 < rounds.length; i += 2) {
    const pair = { [rounds[i]!.mode]: rounds[i]!.perRequestUs, [rounds[i + 1]!.mode]: rounds[i + 1]!.perRequestUs } as Partial<Record<ParserMode, number>>;
    if (pair.parse === undefined || pair.none === undefined) throw new Error(`parser-cpu: rounds ${i + 1} and ${i + 2} are not a parse/pass-through pair`);
    pairs.push({ parse: pair.parse, none: pair.none });
  }
  return pairs;
}

const SAVE_REPORT = {
  type: 'function',
  function: {
    name: 'save_report',
    description: 'Store a report (executed by the client, not the gateway).',
    parameters: { type: 'object', properties: { title: { type: 'string' }, sections: { type: 'array', items: { type: 'object' } } }, required: ['title'] },
  },
};
const body = (mode: ParserMode) =>
  JSON.stringify({
    model: SIM_MODEL,
    stream: true,
    tools: [SAVE_REPORT],
    ...(mode === 'none' ? { tool_parser: 'none' } : {}),
    messages: [{ role: 'user', content: 'overhead-bench-tool-call: save the quarterly report.' }],
  });

/**
 * Parser CPU overhead: our gateway's own CPU time per request for the same streamed Mistral
 * `[TOOL_CALLS]` reply (about 190 tokens, a client-side tool, so no tool time is counted), parsed
 * (the Mistral parser, chosen by model name, plus code fences; the call streamed to the client as
 * `tool_calls` deltas) versus `tool_parser: "none"` (every delta forwarded as content), rounds
 * alternating in one run. CPU comes from the gateway process's own process.cpuUsage() over IPC.
 */
export async function runParserCpu(o: ParserCpuOptions = {}): Promise<{ markdown: string; json: ParserCpuJson }> {
  const quick = o.quick ?? false;
  const pairs = quick ? 2 : 10;
  const concurrency = quick ? 10 : 20;
  const requestsPerRound = quick ? 10 : 40;
  const sim = o.started?.sim ?? (await spawnOverheadSim(o.profile));
  const servers: ChildTarget[] = o.started ? [] : [sim];
  try {
    const gateway = o.started?.conveyor ?? (await spawnOurGateway(sim.url));
    if (!o.started) servers.push(gateway);
    // The baseline's gateway is ours to start and close, started pair or not.
    const before = o.baseline ? await spawnOurGateway(sim.url, o.baseline.dir) : undefined;
    if (before) servers.push(before);
    const sides = [gateway, ...(before ? [before] : [])].map((target) => ({
      target,
      chat: { url: target.url, dispatcher: new Agent({ keepAliveTimeout: 30_000 }) } as ChatTarget,
      checks: { parse: { requests: 0, ok: 0, errors: [] }, none: { requests: 0, ok: 0, errors: [] } } as ParserCpuJson['checks'],
      rounds: [] as RoundCpu[],
    }));
    const total = sides.length * (2 + pairs * 2);
    let done = 0;

    const round = async (side: (typeof sides)[number], mode: ParserMode, record: boolean) => {
      const { target, chat, checks } = side;
      const before = await target.selfCpuUs!();
      let completed = 0;
      for (let sent = 0; sent < requestsPerRound; sent += concurrency) {
        const wave = Math.min(concurrency, requestsPerRound - sent);
        const settled = await Promise.allSettled(Array.from({ length: wave }, () => timedChatStream(chat, body(mode))));
        for (const r of settled) {
          const ok = r.status === 'fulfilled' && looksRight(mode, r.value);
          if (ok) completed++;
          if (!record) continue;
          checks[mode].requests++;
          if (r.status === 'rejected') checks[mode].errors.push((r.reason as Error).message);
          else if (ok) checks[mode].ok++;
        }
      }
      const cpuUs = (await target.selfCpuUs!()) - before;
      o.onProgress?.(++done, total);
      return roundCpu(mode, cpuUs, requestsPerRound, completed);
    };

    for (const side of sides) {
      await round(side, 'parse', false);
      await round(side, 'none', false);
    }
    // Pair k of each gateway back to back, both orders alternating (A B B A): the gateways, and
    // the modes within each pair; pairedFigures and baselineRatio read the rounds two by two.
    for (let p = 0; p < pairs; p++) {
      const order: ParserMode[] = p % 2 === 0 ? ['parse', 'none'] : ['none', 'parse'];
      for (const side of p % 2 === 0 ? sides : [...sides].reverse()) {
        for (const mode of order) side.rounds.push(await round(side, mode, true));
      }
    }
    await Promise.all(sides.map((side) => side.chat.dispatcher.close()));

    const [ours, theirs] = sides;
    const json: ParserCpuJson = {
      meta: {
        date: new Date().toISOString(),
        node: process.version,
        cpus: cpusLine(),
        loadavg: os.loadavg().map((v) => Number(v.toFixed(2))),
        profile: o.profile ?? OVERHEAD_PROFILE.replace(/^.*\/bench\//, 'bench/'),
        workload: 'Mistral [TOOL_CALLS] reply, ~190 tokens, to a client-side tool (save_report); stream: true',
        quick,
      },
      requestsPerRound,
      concurrency,
      ...gatewayFigures(ours!.rounds, ours!.checks),
      ...(theirs && o.baseline
        ? {
            baseline: { label: o.baseline.label, commit: o.baseline.commit ?? null, ...gatewayFigures(theirs.rounds, theirs.checks) },
            ratio: baselineRatio(roundPairs(ours!.rounds), roundPairs(theirs.rounds)),
          }
        : {}),
    };
    return { markdown: parserCpuMarkdown(json, o.command), json };
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
}

function gatewayFigures(rounds: RoundCpu[], checks: ParserCpuJson['checks']): GatewayCpuFigures {
  const { parse, none, difference: diff, pairsLeftOut } = pairedFigures(rounds);
  return {
    perRequestUs: { parse, none },
    rounds,
    differenceUs: { mean: diff.mean, standardError: diff.std / Math.sqrt(Math.max(1, diff.n)) },
    pairsLeftOut,
    shareOfGatewayCpuPct: (diff.mean / parse.mean) * 100,
    extraOverPassThroughPct: (diff.mean / none.mean) * 100,
    checks,
  };
}

function looksRight(mode: ParserMode, t: StreamTiming): boolean {
  return mode === 'parse' ? t.toolCallChunks > 0 && t.tokens === 0 : t.toolCallChunks === 0 && t.tokens > 100;
}
