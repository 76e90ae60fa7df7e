import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { z } from 'zod';
import { startConveyor } from '../../gateway/start-conveyor.ts';
import { arrivalSchedule, type Arrival } from './arrival-schedule.ts';
import { latencyCdf } from './load-cdf.ts';
import { loadMarkdown, type LoadMeta } from './load-report.ts';
import { LOAD_PROFILE, spawnLoadSim } from './load-sim.ts';
import { summarizePhase } from './load-summary.ts';
import { runPhase, type PhaseRun } from './run-phase.ts';
import { commandLine } from '../command-line.ts';

/**
 * Light (about 2 of 16 sequences), half (about 5) and past a full batch: with ~470 tokens per
 * request at 24 ms a step, 16 sequences finish ~1.4 requests/s, so 1.6 req/s fills the batch and
 * queues. See bench/README.md "Load" for the arithmetic.
 */
export const DEFAULT_RATES = [0.4, 0.9, 1.6] as const;
export const DEFAULT_DURATION_S = 30;
const QUICK_RATES = [1.2] as const;
const QUICK_DURATION_S = 5;
export const LOAD_SEED = 0x5eed;

/** The request every client sends: explicit scenario, so nothing depends on prompt matching. */
export const LOAD_REQUEST = {
  model: 'mistral-7b-instruct-sim',
  scenario: 'load-sine-wave',
  messages: [{ role: 'user', content: 'Read a sine wave from the sensor and plot it in Python.' }],
} as const;

const loadOptionsSchema = z.strictObject({
  quick: z.boolean().optional(),
  rates: z.array(z.number().positive().max(50)).min(1).optional(),
  durationS: z.number().positive().max(600).optional(),
  seed: z.number().int().nonnegative().optional(),
  /** Shown in the report; default: this process's command line. */
  command: z.string().optional(),
});

export interface LoadOptions extends z.input<typeof loadOptionsSchema> {
  /** Called after every finished request; total = all arrivals of all rates. */
  onProgress?: (done: number, total: number) => void;
}

const profileSchema = z.looseObject({
  name: z.string(),
  decode: z.object({ baseMs: z.number(), perSeqMs: z.number() }),
  maxNumSeqs: z.number().int().positive(),
});

/**
 * Load benchmark: open-loop Poisson clients against the real gateway in front of the
 * continuous-batching simulator, one phase per arrival rate, partial execution on and off
 * interleaved within each phase. Returns the Markdown report, the JSON (raw records included)
 * and an SVG of the latency CDFs.
 */
export async function runLoad(o: LoadOptions = {}): Promise<{ markdown: string; json: unknown; svg: string }> {
  const { onProgress, ...rest } = o;
  const opts = loadOptionsSchema.parse(rest);
  const rates = opts.rates ?? (opts.quick ? [...QUICK_RATES] : [...DEFAULT_RATES]);
  const durationS = opts.durationS ?? (opts.quick ? QUICK_DURATION_S : DEFAULT_DURATION_S);
  const seed = opts.seed ?? LOAD_SEED;
  const profile = profileSchema.parse(JSON.parse(readFileSync(LOAD_PROFILE, 'utf8')));
  const schedules: Arrival[][] = rates.map((ratePerS, i) => arrivalSchedule({ ratePerS, durationS, seed: seed + i }));
  const total = schedules.reduce((s, a) => s + a.length, 0);
  let done = 0;
  onProgress?.(0, total);

  const sim = await spawnLoadSim();
  try {
    const conveyor = await startConveyor({ gateway: { port: 0, upstream: { baseUrl: sim.url } } });
    try {
      const gatewayUrl = conveyor.gateway.url;
      // Warm-up pair (not measured): first fork of a cell, first tokenizer use, first connections.
      if (!opts.quick) {
        const warm: Arrival[] = [{ index: 0, atMs: 0, mode: 'on' }, { index: 1, atMs: 0, mode: 'off' }];
        await runPhase({ gatewayUrl, sim, request: LOAD_REQUEST, ratePerS: 0, durationS: 0, arrivals: warm });
      }
      const runs: PhaseRun[] = [];
      for (const [i, ratePerS] of rates.entries()) {
        runs.push(
          await runPhase({ gatewayUrl, sim, request: LOAD_REQUEST, ratePerS, durationS, arrivals: schedules[i]!, onDone: () => onProgress?.(++done, total) }),
        );
      }
      const phases = runs.map(summarizePhase);
      const meta: LoadMeta = {
        command: opts.command ?? defaultCommand(),
        date: new Date().toISOString(),
        node: process.version,
        profile: `${profile.name} (step ${profile.decode.baseMs} ms + ${profile.decode.perSeqMs} ms × sequences, maxNumSeqs ${profile.maxNumSeqs}; bench/load/load-profile.json)`,
        workload:
          'scenario load-sine-wave (bench/load/scenarios): the model writes a stdlib sine-wave script whose 13 sensor readings wait 100 ms each (t ≈ 1.3 s, early in the script), the python tool runs it, the model quotes the output',
        arrivals: `open-loop Poisson, ${durationS} s per rate, seed ${seed} (+ rate index), on/off in seeded random pairs${opts.quick ? '; quick: no warm-up' : '; one unmeasured warm-up pair first'}`,
        python: conveyor.sandbox ? `${conveyor.sandbox.python} (sandbox: ${conveyor.sandbox.protections().mode})` : 'off',
      };
      const { series, svg } = latencyCdf(runs);
      const json = { meta, profile, seed, rates, durationS, phases, cdf: series, runs };
      return { markdown: loadMarkdown(meta, phases, profile.maxNumSeqs), json, svg };
    } finally {
      await conveyor.close();
    }
  } finally {
    await sim.close();
  }
}

function defaultCommand(): string {
  const script = process.argv[1] ? relative(process.cwd(), process.argv[1]) : 'bench/load/run.ts';
  return commandLine(`npx tsx ${script}`, process.argv.slice(2));
}
