import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

// A smoke run of the load or replicas script was written as `<date>-load.*` / `<date>-replicas.*`,
// the name of a real run, so the day's real run became `-2` and a smoke test's numbers could be
// quoted as one. The sweep and overhead scripts, and `npm run bench --quick`, add `-quick`.
describe.each([
  ['bench/load/run.ts', 'load'],
  ['bench/replicas/run.ts', 'replicas'],
])('%s --quick', (script, name) => {
  it(`writes <date>-${name}-quick.*, not a real run's name`, async () => {
    const out = mkdtempSync(path.join(tmpdir(), 'bench-quick-names-'));
    dirs.push(out);
    await run(process.execPath, ['--import', 'tsx', script, '--quick', '--out', out], { cwd: root, timeout: 150_000 });
    const files = readdirSync(out);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(f).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\d-${name}-quick\\.(md|json|svg)$`));
  }, 180_000);
});
