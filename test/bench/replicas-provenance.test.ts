import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const out = mkdtempSync(path.join(os.tmpdir(), 'bench-replicas-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

// Its files gave the command and the figures, but not when, on which Node, CPUs or commit they
// were measured (every other bench result says so): a number quoted later could not be traced.
describe('bench/replicas/run.ts --quick result files', () => {
  // One run, read by both tests.
  beforeAll(async () => {
    await run(process.execPath, ['--import', 'tsx', 'bench/replicas/run.ts', '--quick', '--out', out], { cwd: root, timeout: 120_000 });
  }, 180_000);

  it('say when, where and from which code they were measured', () => {
    const files = readdirSync(out);
    const md = readFileSync(path.join(out, files.find((f) => f.endsWith('.md'))!), 'utf8');
    const json = JSON.parse(readFileSync(path.join(out, files.find((f) => f.endsWith('.json'))!), 'utf8'));
    expect(md).toContain(`Node ${process.version}`);
    expect(md).toContain(`${os.cpus().length} × `);
    expect(md).toMatch(/commit ([0-9a-f]{7,}|unknown)/);
    expect(json.node).toBe(process.version);
    expect(json.cpus).toMatch(new RegExp(`^${os.cpus().length} × `));
    expect(json.commit).toBeTypeOf('string');
    expect(Date.now() - Date.parse(json.date)).toBeLessThan(300_000);
  });

  // A smoke run was written as `<date>-replicas.*`, the name of a real run, so the day's real run
  // became `-2` and a smoke test's numbers could be quoted as one (standalone-quick-names.test.ts
  // ran the script again to check it; the load script's are checked in standalone-progress.test.ts).
  it("are named <date>-replicas-quick.*, not a real run's name", () => {
    const files = readdirSync(out);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(f).toMatch(/^\d{4}-\d\d-\d\d-replicas-quick\.(md|json|svg)$/);
  });
});
