import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SCENARIOS_DIR } from '../../sim/scenario-loader.ts';
import { ScenarioSet } from '../../sim/scenario-set.ts';

const shipped = ScenarioSet.load({ dirs: [SCENARIOS_DIR] });
const ask = [{ role: 'user', content: 'Can you plot a sine wave for me?' }];

function scriptOf(scenario: string): string {
  const text = shipped.reply(ask, shipped.get(scenario)).text;
  const match = /```python\n([\s\S]*?)```/.exec(text);
  if (!match?.[1]) throw new Error(`${scenario}: no python fence in round 1`);
  return match[1];
}

function runPython(code: string, cwd: string, python = 'python3') {
  // MPLCONFIGDIR: matplotlib warns on stderr when it cannot write its cache under $HOME.
  return spawnSync(python, ['-c', code], { cwd, encoding: 'utf8', timeout: 20_000, env: { ...process.env, MPLCONFIGDIR: cwd } });
}

/** The first interpreter that imports all `modules` (Debian's python3-numpy lives in /usr/bin). */
function pythonWith(...modules: string[]): string | undefined {
  const probe = modules.map((m) => `import ${m}`).join('\n');
  return ['python3', '/usr/bin/python3'].find((python) => runPython(probe, tmpdir(), python).status === 0);
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the Python in the shipped scenarios', () => {
  for (const [scenario, min, max] of [['sine-wave', 10, 20], ['sine-wave-stdlib', 15, 25]] as const) {
    it(`${scenario}: round 1 is a ${min}-${max} line script that Python parses, with several top-level statements`, () => {
      const code = scriptOf(scenario);
      const lines = code.trimEnd().split('\n');
      expect(lines.length).toBeGreaterThanOrEqual(min);
      expect(lines.length).toBeLessThanOrEqual(max);
      const count = execFileSync('python3', ['-c', 'import ast,sys; print(len(ast.parse(sys.stdin.read()).body))'], {
        input: code,
        encoding: 'utf8',
      });
      expect(Number(count)).toBeGreaterThanOrEqual(5);
    });
  }

  it('sine-wave-stdlib runs and prints the same output every time', () => {
    dir = mkdtempSync(join(tmpdir(), 'sim-py-'));
    const first = runPython(scriptOf('sine-wave-stdlib'), dir);
    const second = runPython(scriptOf('sine-wave-stdlib'), dir);
    expect(first.status).toBe(0);
    expect(first.stdout).toContain('ASCII plot:');
    expect(first.stdout.trimEnd().split('\n').at(-1)).toBe('samples=13 peak=1.000');
    expect(second.stdout).toBe(first.stdout);
  });

  it('sine-wave builds x/y with numpy, plots with Agg and saves sine_wave.png (run where numpy is installed)', () => {
    const code = scriptOf('sine-wave');
    for (const needle of ['import numpy as np', 'matplotlib.use("Agg")', 'np.linspace', 'np.sin', 'savefig("sine_wave.png")', 'print(']) {
      expect(code).toContain(needle);
    }
    // Machines without numpy/matplotlib still check the script's shape above; this part runs it.
    const python = pythonWith('numpy', 'matplotlib');
    if (python === undefined) return;
    dir = mkdtempSync(join(tmpdir(), 'sim-py-'));
    const result = runPython(code, dir, python);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('Saved sine_wave.png with 200 points\ny ranges from -1.000 to 1.000\n');
    expect(statSync(join(dir, 'sine_wave.png')).size).toBeGreaterThan(1000);
  });

  it('round 2 of both quotes the tool output', () => {
    for (const scenario of ['sine-wave', 'sine-wave-stdlib']) {
      const reply = shipped.reply(
        [...ask, { role: 'assistant', content: '```python\n...\n```' }, { role: 'tool', content: 'OUTPUT-MARKER 42' }],
        shipped.get(scenario),
      );
      expect(reply.text).toContain('OUTPUT-MARKER 42');
    }
  });
});
