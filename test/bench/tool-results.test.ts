import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const out = suiteTempDir('conveyor-tool-results-');

interface Timing {
  results: number[];
  roundEnd: number;
  answerEnd: number;
}

describe('bench/tool-results/run.ts', () => {
  it('times each of the Search workload’s three results, partial execution on and off, into its result files', async () => {
    await run(process.execPath, ['--import', 'tsx', 'bench/tool-results/run.ts', '--runs', '1', '--profile', 'fast-test', '--out', out], { cwd: root, timeout: 120_000 });
    const files = readdirSync(out);
    const json = files.find((f) => f.endsWith('-tool-results.json'));
    expect(files).toContain(json!.replace(/\.json$/, '.md'));
    const result = JSON.parse(readFileSync(path.join(out, json!), 'utf8')) as { command: string; targets: Array<{ label: string; partial: boolean; timings: Timing[] }> };
    expect(result.command).toBe(`npx tsx bench/tool-results/run.ts --runs 1 --profile fast-test --out ${out}`);
    expect(result.targets.map((t) => [t.label, t.partial, t.timings.length])).toEqual([
      ['this code, partial execution on', true, 1],
      ['this code, partial execution off', false, 1],
    ]);
    for (const { timings } of result.targets) {
      const [{ results, roundEnd, answerEnd }] = timings as [Timing];
      // Each result comes before its round ends, and the round before the answer's end.
      expect(results).toHaveLength(3);
      expect(Math.max(...results)).toBeLessThanOrEqual(roundEnd);
      expect(roundEnd).toBeLessThan(answerEnd);
    }
    const markdown = readFileSync(path.join(out, json!.replace(/\.json$/, '.md')), 'utf8');
    expect(markdown).toMatch(/^\| this code, partial execution on \|( [\d.]+ \/ [\d.]+ \|){5}$/m);
  }, 150_000);
});
