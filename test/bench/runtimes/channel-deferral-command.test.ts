import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../../..');

// A result file carries the command that made it, to be run again. channel-deferral wrote its own
// `--pings N --noise K` and dropped `--out`: a rerun of the printed line wrote to bench/results.
describe('channel-deferral report command', () => {
  it('is the command line as given, --out included', async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'channel-deferral out '));
    const args = ['--pings', '1', '--noise', '0', '--out', out];
    await run(process.execPath, ['--import', 'tsx', 'bench/runtimes/channel-deferral.ts', ...args], { cwd: root, timeout: 60_000 });

    const files = readdirSync(out).sort();
    expect(files.map((f) => f.replace(/^\d{4}-\d\d-\d\d-/, ''))).toEqual(['channel-deferral.json', 'channel-deferral.md']);
    const expected = `npx tsx bench/runtimes/channel-deferral.ts --pings 1 --noise 0 --out '${out}'`;
    expect((JSON.parse(readFileSync(path.join(out, files[0]!), 'utf8')) as { command: string }).command).toBe(expected);
    expect(readFileSync(path.join(out, files[1]!), 'utf8')).toContain(`\`${expected}\``);
  }, 90_000);
});
