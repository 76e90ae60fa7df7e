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

/** Runs each section with its own progress bar; each starts and stops its own processes. */
export async function runExtraSections(sections: readonly ExtraSection[], o: { quick: boolean }): Promise<SectionResult[]> {
  const results: SectionResult[] = [];
  for (const name of sections) {
    const started = performance.now();
    const bar = progressBar(name, 1);
    const onProgress = (done: number, total: number) => {
      bar.setTotal(total);
      bar.update(done);
    };
    try {
      const result = await runSection(name, o.quick, onProgress);
      results.push({ name, ...result, wallS: (performance.now() - started) / 1000 });
    } finally {
      bar.stop();
    }
  }
  return results;
}

async function runSection(name: ExtraSection, quick: boolean, onProgress: (done: number, total: number) => void): Promise<Omit<SectionResult, 'name' | 'wallS'>> {
  switch (name) {
    case 'sweep': {
      const r = await runSweep({ quick, onProgress });
      return { markdown: r.markdown, json: r, svg: r.svg };
    }
    case 'load':
      return runLoad({ quick, onProgress });
    case 'overhead':
      return runOverhead({ quick, onProgress });
    case 'parser-cpu':
      return runParserCpu({ quick });
  }
}
