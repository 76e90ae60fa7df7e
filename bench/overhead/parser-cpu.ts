import os from 'node:os';
import { cpusLine } from '../provenance.ts';
import { Agent } from 'undici';
import { summarize, type Summary } from '../stats.ts';
import { parserCpuMarkdown } from './parser-cpu-report.ts';
import { OVERHEAD_PROFILE, SIM_MODEL, spawnOurGateway, spawnOverheadSim } from './bench-servers.ts';
import type { ChildTarget } from './child-target.ts';
import { timedChatStream, type ChatTarget, type StreamTiming } from './timed-chat-stream.ts';

export type ParserMode = 'parse' | 'none';

export interface ParserCpuOptions {
  quick?: boolean;
  /** The command line, under the report's title: the standalone script's, or the `npm run bench` one of a section. */
  command?: string;
  onProgress?: (done: number, total: number) => void;
}

export interface ParserCpuJson {
  meta: Record<string, unknown>;
  requestsPerRound: number;
  concurrency: number;
  /** Gateway CPU per request in each round, µs, per mode (rounds alternate parse/none: A B B A …). */
  perRequestUs: Record<ParserMode, Summary>;
  /** requests = sent; completed = those that completed correctly, the divisor of perRequestUs (NaN when none did). */
  rounds: RoundCpu[];
  /** parse − none, µs per request: mean of the paired rounds' differences, and its standard error. */
  differenceUs: { mean: number; standardError: number };
  /** The difference as a share of the parsing gateway's CPU, and as extra CPU over pass-through, %. */
  shareOfGatewayCpuPct: number;
  extraOverPassThroughPct: number;
  /** Per-request sanity: parse mode saw tool_calls and no content; none mode saw content and no tool_calls. */
  checks: Record<ParserMode, { requests: number; ok: number; errors: string[] }>;
}

export interface RoundCpu { mode: ParserMode; cpuUs: number; requests: number; completed: number; perRequestUs: number }

/**
 * One round's CPU per request, over the requests that completed correctly: a failed one costs the
 * gateway less than a whole stream, so dividing by all sent would pull the figure down. NaN (not
 * Infinity) when none completed, so the summaries leave that round out.
 */
export function roundCpu(mode: ParserMode, cpuUs: number, requests: number, completed: number): RoundCpu {
  return { mode, cpuUs, requests, completed, perRequestUs: completed > 0 ? cpuUs / completed : Number.NaN };
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
  const sim = await spawnOverheadSim();
  const servers: ChildTarget[] = [sim];
  try {
    const gateway = await spawnOurGateway(sim.url);
    servers.push(gateway);
    const chat: ChatTarget = { url: gateway.url, dispatcher: new Agent({ keepAliveTimeout: 30_000 }) };
    const checks: ParserCpuJson['checks'] = { parse: { requests: 0, ok: 0, errors: [] }, none: { requests: 0, ok: 0, errors: [] } };
    const total = 2 + pairs * 2;
    let done = 0;

    const round = async (mode: ParserMode, record: boolean) => {
      const before = await gateway.selfCpuUs!();
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
      const cpuUs = (await gateway.selfCpuUs!()) - before;
      o.onProgress?.(++done, total);
      return roundCpu(mode, cpuUs, requestsPerRound, completed);
    };

    await round('parse', false);
    await round('none', false);
    const rounds: ParserCpuJson['rounds'] = [];
    for (let p = 0; p < pairs; p++) {
      const order: ParserMode[] = p % 2 === 0 ? ['parse', 'none'] : ['none', 'parse'];
      for (const mode of order) rounds.push(await round(mode, true));
    }
    await chat.dispatcher.close();

    const of = (mode: ParserMode) => rounds.filter((r) => r.mode === mode).map((r) => r.perRequestUs);
    // A round where nothing completed has no figure (NaN): it and its pair are left out.
    const parse = summarize(of('parse').filter((v) => !Number.isNaN(v)));
    const none = summarize(of('none').filter((v) => !Number.isNaN(v)));
    const diffs = of('parse').map((v, i) => v - of('none')[i]!).filter((v) => !Number.isNaN(v));
    const diff = summarize(diffs);
    const json: ParserCpuJson = {
      meta: {
        date: new Date().toISOString(),
        node: process.version,
        cpus: cpusLine(),
        loadavg: os.loadavg().map((v) => Number(v.toFixed(2))),
        profile: OVERHEAD_PROFILE.replace(/^.*\/bench\//, 'bench/'),
        workload: 'Mistral [TOOL_CALLS] reply, ~190 tokens, to a client-side tool (save_report); stream: true',
        quick,
      },
      requestsPerRound,
      concurrency,
      perRequestUs: { parse, none },
      rounds,
      differenceUs: { mean: diff.mean, standardError: diff.std / Math.sqrt(Math.max(1, diff.n)) },
      shareOfGatewayCpuPct: (diff.mean / parse.mean) * 100,
      extraOverPassThroughPct: (diff.mean / none.mean) * 100,
      checks,
    };
    return { markdown: parserCpuMarkdown(json, o.command), json };
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
}

function looksRight(mode: ParserMode, t: StreamTiming): boolean {
  return mode === 'parse' ? t.toolCallChunks > 0 && t.tokens === 0 : t.toolCallChunks === 0 && t.tokens > 100;
}
