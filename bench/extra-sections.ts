import { runLoad } from './load/run-load.ts';
import { runOverhead } from './overhead/run-overhead.ts';
import { runParserCpu } from './overhead/parser-cpu.ts';
import { progressBar } from './progress.ts';
import { runSweep } from './sweep/run-sweep.ts';

/** The parts of the benchmark beyond the six workloads, in the order `all` runs them. */
export const EXTRA_SECTIONS = ['sweep', 'load', 'overhead', 'parser-cpu'] as const;
export type ExtraSection = (typeof EXTRA_SECTIONS)[number];

export interface SectionResult {
  name: ExtraSection;
  markdown: string;
  json: unknown;
  /** Written beside the results as `<date>-<name>-<section>.svg`. */
  svg?: string;
  wallS: number;
}

/**
 * Runs each section with its own progress bar; each starts and stops its own processes. A section
 * that fails is reported in `failures` and the next one still runs: one broken part does not
 * throw away the rest of a long run.
 */
export async function runExtraSections(
  sections: readonly ExtraSection[],
  o: { quick: boolean; command: string; onStart?: (name: ExtraSection) => void; onResult?: (result: SectionResult) => void },
): Promise<{ results: SectionResult[]; failures: Array<{ part: string; message: string }> }> {
  const results: SectionResult[] = [];
  const failures: Array<{ part: string; message: string }> = [];
  for (const name of sections) {
    o.onStart?.(name);
    const started = performance.now();
    const bar = progressBar(name);
    const onProgress = (done: number, total: number) => bar.update(done, total);
    try {
      const result = await runSection(name, o, onProgress);
      const done = { name, ...result, wallS: (performance.now() - started) / 1000 };
      results.push(done);
      o.onResult?.(done);
    } catch (err) {
      failures.push({ part: name, message: err instanceof Error ? err.message : String(err) });
    } finally {
      bar.stop();
    }
  }
  return { results, failures };
}

async function runSection(name: ExtraSection, o: { quick: boolean; command: string }, onProgress: (done: number, total: number) => void): Promise<Omit<SectionResult, 'name' | 'wallS'>> {
  const { quick, command } = o;
  switch (name) {
    case 'sweep': {
      // The JSON keeps the numbers: the Markdown and the chart are files of their own (.md, -sweep.svg).
      const { markdown, svg, ...json } = await runSweep({ quick, command, onProgress });
      return { markdown, json, svg };
    }
    case 'load':
      return runLoad({ quick, command, onProgress });
    // Under each section's title, as the sweep and the load have it: the run's header names the
    // command once, and a chapter read (or quoted) alone said nothing of how to run it again.
    case 'overhead':
      return runOverhead({ quick, command, onProgress });
    case 'parser-cpu':
      return runParserCpu({ quick, command, onProgress });
  }
}
