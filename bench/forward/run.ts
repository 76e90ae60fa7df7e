/**
 * What the gateway costs on an endpoint it only forwards: `/v1/completions` streamed straight to
 * the simulator, forwarded by the gateway (gateway/upstream-forward-route.ts), and, for scale,
 * `/v1/chat/completions` through the gateway (parsed, tool-aware). Closed loop, C concurrent
 * streams of 200 tokens, 8 s phases in alternating order, each server in its own process.
 *
 *   npx tsx bench/forward/run.ts [--concurrency 1,100] [--phase-ms 8000] [--rounds 3] [--out DIR]
 *     → bench/results/<date>-forward.{md,json}
 */
import os from 'node:os';
import { cpusLine } from '../provenance.ts';
import { Command } from 'commander';
import { usageErrorsExit2 } from '../usage-errors.ts';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { spawnOurGateway, spawnOverheadSim, SIM_MODEL } from '../overhead/bench-servers.ts';
import { untilQuiet } from '../overhead/proc-cpu.ts';
import { wholeNumber, wholeNumbers } from '../../gateway/commands/number-options.ts';
import { checkOutOption, jsonText, writeResultFiles } from '../result-files.ts';
import { summarize } from '../stats.ts';
import { forwardMarkdown, TARGETS, type ForwardRow, type Target, type Unsettled } from './forward-report.ts';
import { SseReadScanner } from './sse-read-scanner.ts';
import { commandLine } from '../command-line.ts';

const program = usageErrorsExit2(new Command().name('forward'))
  .description('What the gateway costs on an endpoint it only forwards (/v1/completions), next to its chat completions.')
  .option('--concurrency <levels>', 'streams in flight, comma-separated', wholeNumbers(1), [1, 100])
  .option('--phase-ms <ms>', 'length of each measured phase', wholeNumber(100), 8000)
  .option('--rounds <n>', 'rounds of phases, in alternating order', wholeNumber(1, 100), 3)
  .option('--out <dir>', 'where result files go', 'bench/results')
  .parse();
const { concurrency: levels, phaseMs, rounds, out } = program.opts<{ concurrency: number[]; phaseMs: number; rounds: number; out: string }>();
// Before measuring: a bad --out found only when the files are written loses the whole run.
checkOutOption(program, out);
const command = commandLine('npx tsx bench/forward/run.ts', process.argv.slice(2));

const TOKENS = 200;
const PROMPT = 'overhead-bench-plain: write a paragraph about gateways.';

const sim = await spawnOverheadSim();
const gateway = await spawnOurGateway(sim.url);
const dispatcher = new Agent({ connections: 1000 });

const completions = JSON.stringify({ model: SIM_MODEL, prompt: PROMPT, max_tokens: TOKENS, stream: true });
const requests: Record<Target, { url: string; body: string }> = {
  'completions, direct': { url: `${sim.url}/completions`, body: completions },
  'completions, forwarded': { url: `${gateway.url}/completions`, body: completions },
  'chat, through the gateway': {
    url: `${gateway.url}/chat/completions`,
    body: JSON.stringify({ model: SIM_MODEL, messages: [{ role: 'user', content: PROMPT }], max_tokens: TOKENS, stream: true }),
  },
};

/** One stream: time to its first token's bytes, and its events. */
async function stream(target: Target): Promise<{ ttftMs: number; events: number }> {
  const { url, body } = requests[target];
  const t0 = performance.now();
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher });
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${await res.body.text()}`);
  let ttftMs = NaN;
  const reads = new SseReadScanner();
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    if (reads.read(chunk.toString())) ttftMs = performance.now() - t0;
  }
  return { ttftMs, events: reads.events };
}

interface Phase {
  target: Target;
  streams: number;
  ttftMs: number[];
  events: number;
  gatewayCpuMs: number;
  simCpuMs: number;
}

async function phase(target: Target, concurrency: number): Promise<Phase> {
  const until = performance.now() + phaseMs;
  const result: Phase = { target, streams: 0, ttftMs: [], events: 0, gatewayCpuMs: -gateway.cpuMs(), simCpuMs: -sim.cpuMs() };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const one = await stream(target);
        result.streams++;
        result.ttftMs.push(one.ttftMs);
        result.events += one.events;
      }
    }),
  );
  result.gatewayCpuMs += gateway.cpuMs();
  result.simCpuMs += sim.cpuMs();
  return result;
}

const rows: ForwardRow[] = [];
const unsettled: Unsettled[] = [];
try {
  for (const concurrency of levels) {
    for (const target of TARGETS) await phase(target, concurrency); // warm-up, not recorded
    // As runOverhead does: both servers' CPU per token is measured, so neither may still be busy
    // when the level begins (our gateway's start-up work, its workers loading plugins, ~2 s of CPU
    // after "listening"; the streams of the warm-up or the level before). Waited for after the
    // warm-up; only the gateway was waited for, before it, and whether it settled was not kept.
    // One still busy after untilQuiet's 20 s is measured anyway, and named in the report.
    const servers = [gateway, sim];
    const settled = await Promise.all(servers.map((server) => untilQuiet(() => server.cpuMs())));
    for (const [i, server] of servers.entries()) if (!settled[i]) unsettled.push({ concurrency, server: server.name });
    const phases: Phase[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const target of r % 2 === 0 ? TARGETS : [...TARGETS].reverse()) {
        phases.push(await phase(target, concurrency));
        process.stderr.write('.');
      }
    }
    for (const target of TARGETS) {
      const mine = phases.filter((p) => p.target === target);
      const ttft = summarize(mine.flatMap((p) => p.ttftMs));
      rows.push({
        concurrency,
        target,
        streams: mine.reduce((n, p) => n + p.streams, 0),
        ttftP50Ms: ttft.p50,
        ttftP99Ms: ttft.p99,
        ttftMissing: ttft.missing,
        // Events ≈ tokens (one per token, plus the role or usage chunk and [DONE]).
        gatewayCpuPer1kTokens: mine.map((p) => (p.gatewayCpuMs / p.events) * 1000),
        simCpuPer1kTokens: mine.map((p) => (p.simCpuMs / p.events) * 1000),
      });
    }
  }
} finally {
  await dispatcher.close();
  await gateway.close();
  await sim.close();
}
process.stderr.write('\n');

const markdown = forwardMarkdown({
  command,
  date: new Date().toISOString().slice(0, 10),
  node: process.version,
  cpus: cpusLine(),
  tokens: TOKENS,
  rounds,
  phaseMs,
  rows,
  unsettled,
});
const files = writeResultFiles(out, 'forward', { '.md': markdown, '.json': jsonText({ command, node: process.version, cpu: os.cpus()[0]?.model.trim(), unsettled, rows }) });
console.log(markdown);
console.log(files.join('\n'));
