import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const date = new Date().toISOString().slice(0, 10);
const script = (file: string, args: string[]) => run(process.execPath, ['--import', 'tsx', file, ...args], { cwd: root, timeout: 120_000 });
const json = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

// Three scripts beside `npm run bench` wrote their results otherwise: bench/parsers/run.ts always
// into bench/results (no --out), rewriting its day's file; continuous-usage-cost.ts only printed
// its table (no --out, no commit or CPU in it); adversarial.ts took --out as a file, and wrote
// nothing without it. Now each writes `<--out>/<date>-<name>.{md,json}` as the others do, never
// over an earlier run, with its command, commit and CPUs. The figures are not checked: small runs.
describe('side scripts write <date>-<name>.{md,json} into --out', () => {
  it('bench/parsers/adversarial.ts, and refuses its old --out <file>.md saying what to pass', async () => {
    const out = suiteTempDir('adversarial-out-');
    await script('bench/parsers/adversarial.ts', ['--n', '100', '--out', out]);
    expect(readdirSync(out).sort()).toEqual([`${date}-parsers-adversarial.json`, `${date}-parsers-adversarial.md`]);
    const md = readFileSync(`${out}/${date}-parsers-adversarial.md`, 'utf8');
    expect(md).toContain(`npx tsx bench/parsers/adversarial.ts --n 100 --out ${out}\n`);
    expect(md).toMatch(/, commit [0-9a-f]{7,}( \+ changes)?; \d+ × .+, load average at the end /);
    const result = json(`${out}/${date}-parsers-adversarial.json`);
    expect(result).toMatchObject({ n: 100, command: expect.stringContaining('--n 100'), commit: expect.any(String), cpus: expect.any(String) });
    expect(result.rows).toEqual(expect.arrayContaining([expect.objectContaining({ format: 'hermes', ms: expect.objectContaining({ stream: expect.any(Object), oneDelta: expect.any(Object) }) })]));

    const old = `${out}/2026-11-29-parsers-adversarial.md`;
    const failed = await script('bench/parsers/adversarial.ts', ['--n', '100', '--out', old]).then(() => null, (err: { code: number; stderr: string; stdout: string }) => err);
    expect(failed?.code).toBe(2);
    expect(failed!.stderr.trim()).toBe(`parsers-adversarial: --out ${old}: a file's name, not a folder's: --out takes the folder the files are written in, as <date>-<name>.*`);
    expect(failed!.stdout).toBe('');
  }, 120_000);

  it('bench/overhead/continuous-usage-cost.ts', async () => {
    const out = suiteTempDir('usage-cost-out-');
    await script('bench/overhead/continuous-usage-cost.ts', ['--seconds', '1', '--streams', '2', '--rounds', '2', '--out', out]);
    expect(readdirSync(out).sort()).toEqual([`${date}-continuous-usage-cost.json`, `${date}-continuous-usage-cost.md`]);
    const md = readFileSync(`${out}/${date}-continuous-usage-cost.md`, 'utf8');
    expect(md).toContain(`npx tsx bench/overhead/continuous-usage-cost.ts --seconds 1 --streams 2 --rounds 2 --out ${out}\n`);
    expect(md).toMatch(/, commit [0-9a-f]{7,}( \+ changes)?; \d+ × .+, load average at the end /);
    expect(md).toMatch(/\| every chunk \| [\d.]+ \|/);
    expect(json(`${out}/${date}-continuous-usage-cost.json`)).toMatchObject({ streams: 2, rounds: 2, seconds: 1, commit: expect.any(String), cpus: expect.any(String), cpuPer1kTokensMs: { plain: expect.any(Number), continuous: expect.any(Number) } });
  }, 120_000);

  // --update read and rewrote bench/results/<date>-parsers.json; its record of rows from two commits
  // read "X, rows re-run on Y", naming neither the rows nor which commit each came from.
  it('bench/parsers/run.ts, an --update writing the next -N beside the results it read', async () => {
    const out = suiteTempDir('parsers-out-');
    await script('bench/parsers/run.ts', ['--quick', '--only', '^hermes$', '--out', out]);
    const first = `${out}/${date}-parsers-quick.json`;
    expect(readdirSync(out).sort()).toEqual([first, `${out}/${date}-parsers-quick.md`].map((f) => path.basename(f)));
    const earlier = json(first);
    expect(earlier).toMatchObject({ command: `npx tsx bench/parsers/run.ts --quick --only '^hermes$' --out ${out}`, commit: expect.any(String) });
    // As if measured on another commit: the row kept from it must say so.
    writeFileSync(first, JSON.stringify({ ...earlier, commit: 'abc1234' }));

    await script('bench/parsers/run.ts', ['--quick', '--only', '^code-fence$', '--update', '--out', out]);
    expect(json(first).commit).toBe('abc1234');
    const merged = json(`${out}/${date}-parsers-quick-2.json`);
    expect((merged.cases as { id: string }[]).map((c) => c.id)).toEqual(['code-fence', 'hermes']);
    expect(merged.commit).toBe('abc1234');
    // This tree's commit (other work may have committed between the two runs: not earlier.commit).
    expect(merged.rowCommits).toEqual({ 'code-fence': expect.stringMatching(/^[0-9a-f]{7,}( \+ changes)?$/) });
    const md = readFileSync(`${out}/${date}-parsers-quick-2.md`, 'utf8');
    expect(md).toContain(`--only '^hermes$' --out ${out}\nnpx tsx bench/parsers/run.ts --quick --only '^code-fence$' --update --out ${out}\n`);
    expect(md).toContain(`Commit abc1234 (but code-fence re-measured with \`--update\` on ${(merged.rowCommits as Record<string, string>)['code-fence']}).`);
  }, 120_000);
});
