import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

describe('npm run bench -- workloads --quick', () => {
  const out = suiteTempDir('conveyor-bench-');

  // Checks that the files and their fields exist, not the timings (those belong in bench/results).
  it('drives the six workloads through real gateways and writes Markdown, JSON and SVG results', async () => {
    await run(process.execPath, ['--import', 'tsx', 'bench/cli.ts', 'workloads', '--quick', '--profile', 'fast-test', '--out', out], { cwd: root, timeout: 240_000 });
    const files = (await readdir(out)).sort();
    expect(files).toHaveLength(4);
    const stem = files.find((f) => f.endsWith('.json'))!.replace(/\.json$/, '');
    expect(files).toEqual([`${stem}-timelines.svg`, `${stem}.json`, `${stem}.md`, `${stem}.svg`].sort());
    expect(stem).toMatch(/^\d{4}-\d{2}-\d{2}-workloads-quick$/);

    const json = JSON.parse(await readFile(path.join(out, `${stem}.json`), 'utf8'));
    expect(json.meta).toMatchObject({ profile: 'fast-test', toolProfile: { name: 'paper' } });
    const names = json.reports.map((r: { workload: string }) => r.workload);
    expect(names).toEqual(['codegen', 'search', 'planning', 'validation', 'database', 'calculator']);
    for (const r of json.reports) {
      for (const key of ['on', 'off']) expect(Object.keys(r[key])).toEqual(expect.arrayContaining(['mean', 'std', 'p50', 'p99']));
      expect(r).toHaveProperty('improvementPct');
      expect(r).toHaveProperty('boundMs');
      expect(r).toHaveProperty('boundAchieved');
      expect(r.generationMs.length).toBeGreaterThan(0);
      expect(r.records).toHaveLength(4);
      // The median run of each mode, whole: from its arrival to its end.
      for (const mode of ['on', 'off']) expect(r.examples[mode].map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['request-start', 'round-start', 'request-end']));
    }
    expect(json.reports.find((r: { workload: string }) => r.workload === 'validation').metric).toBe('detection');

    const md = await readFile(path.join(out, `${stem}.md`), 'utf8');
    for (const name of names) expect(md).toContain(`| ${name}`);
    const svg = await readFile(path.join(out, `${stem}.svg`), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    for (const name of names) expect(svg).toContain(name);
    const timelines = await readFile(path.join(out, `${stem}-timelines.svg`), 'utf8');
    expect(timelines.startsWith('<svg')).toBe(true);
    for (const name of names) expect(timelines).toContain(`>${name}</text>`);
    expect(timelines.match(/>on \(partial\)</g)).toHaveLength(names.length);
  }, 300_000);

  it('refuses an unknown simulator profile in one line before starting anything', async () => {
    const failed = await run(process.execPath, ['--import', 'tsx', 'bench/cli.ts', 'calculator', '--profile', 'no-such-profile'], { cwd: root, timeout: 60_000 }).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr.trim()).toMatch(/^bench: timing profile "no-such-profile" not found/);
    expect(failed?.stderr).not.toContain('simulator exited');
  });
});
