import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runScript } from './python-test-helpers.ts';

/**
 * The observation rule, checked over a committed corpus of real scripts: streaming a script in
 * one line at a time (each statement runs as soon as it is complete) must give the model exactly
 * what running the whole file at once gives it.
 */
const CORPUS = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'fixtures', 'python-corpus');
const scripts = readdirSync(CORPUS).filter((f) => f.endsWith('.py')).sort();

let sandbox: PythonSandbox;
let scratch: string;

beforeAll(async () => {
  sandbox = await startPythonSandbox();
  scratch = mkdtempSync(join(tmpdir(), 'conveyor-corpus-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** `python -u script.py 2>&1`: what a person running the file in a terminal would see. */
function realRun(path: string, filename: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      '/bin/sh',
      ['-c', 'exec "$0" -u "$1" 2>&1 </dev/null', sandbox.python, path],
      {
        cwd: scratch,
        env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: scratch, MPLCONFIGDIR: join(scratch, '.mpl'), OPENBLAS_NUM_THREADS: '1', MPLBACKEND: 'Agg' },
        maxBuffer: 1 << 24,
      },
      (error, stdout) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve(stdout.split(path).join(filename));
      },
    );
  });
}

describe('incremental run equals whole-file run', () => {
  it('has a corpus of at least 50 scripts', () => {
    expect(scripts.length).toBeGreaterThanOrEqual(50);
  });

  it.each(scripts)('%s', async (name) => {
    const source = readFileSync(join(CORPUS, name), 'utf8');
    const filename = `<llm-cell-${name}>`;
    const [incremental, whole, real] = await Promise.all([
      runScript(sandbox, source, { mode: 'incremental', filename }),
      runScript(sandbox, source, { mode: 'whole', filename }),
      realRun(join(CORPUS, name), filename),
    ]);
    // The baseline itself is faithful: the sandbox's whole mode prints what the interpreter does.
    expect(whole.result.observation).toBe(real);
    expect(incremental.result.killedBy).toBeUndefined();
    expect(whole.result.killedBy).toBeUndefined();
    expect(incremental.result.observation).toBe(whole.result.observation);
    expect(incremental.result.ok).toBe(whole.result.ok);
    expect(incremental.result.error?.type).toBe(whole.result.error?.type);
    expect(incremental.result.error?.compileError).toBe(whole.result.error?.compileError);
    if (name.includes('compile_error')) {
      // A whole-file run prints nothing but the compile error, even though the incremental run
      // had already executed (and streamed) the statements before it.
      expect(incremental.result.error?.compileError).toBe(true);
      expect(incremental.result.observation).toMatch(new RegExp(`^  File "${filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}", line \\d+\\n`));
      expect(incremental.result.unitsRun).toBeGreaterThan(0);
      expect(incremental.events.some((e) => e.type === 'output')).toBe(true);
    } else if (name.includes('runtime') || name.includes('assertion')) {
      expect(incremental.result.ok).toBe(false);
      expect(incremental.result.observation).toContain('Traceback (most recent call last):');
    }
  });
});
