import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { runSweep } from '../../bench/sweep/run-sweep.ts';
import { QUICK_INDICES, SWEEP_RATIOS, idealSpeedup, predictLatency, sweepPlan } from '../../bench/sweep/sweep-plan.ts';
import { SWEEP_PROFILE, fillerOfTokens } from '../../bench/sweep/sweep-scenarios.ts';
import { workTool } from '../../bench/sweep/work-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { encodeText } from '../../sim/mistral-tokenizer.ts';

describe('t/g sweep', () => {
  it('plans 10 log-spaced ratios from 0.05 to 20, one scenario each', () => {
    expect(SWEEP_RATIOS).toHaveLength(10);
    expect(SWEEP_RATIOS[0]).toBeCloseTo(0.05, 10);
    expect(SWEEP_RATIOS[9]).toBeCloseTo(20, 10);
    const steps = SWEEP_RATIOS.slice(1).map((r, i) => r / SWEEP_RATIOS[i]!);
    for (const s of steps) expect(s).toBeCloseTo(steps[0]!, 10);
    const plan = sweepPlan(SWEEP_PROFILE);
    expect(new Set(plan.map((p) => p.scenario)).size).toBe(10);
    for (const p of plan) expect(p.fillerTokens).toBeGreaterThan(0);
  });

  it('sizes the payload filler in exact Mistral tokens', () => {
    for (const n of [1, 7, 52]) expect(encodeText(fillerOfTokens(n))).toHaveLength(n);
  });

  it('predicts off = g + t + O and on = max(g, g0 + t) + O; the textbook bound peaks at t = g', () => {
    expect(predictLatency({ gMs: 400, g0Ms: 100, tMs: 200, overheadMs: 20 })).toEqual({ offMs: 620, onMs: 420 });
    expect(predictLatency({ gMs: 400, g0Ms: 100, tMs: 500, overheadMs: 20 })).toEqual({ offMs: 920, onMs: 620 });
    expect(idealSpeedup(1)).toBe(2);
    expect(idealSpeedup(0.5)).toBe(1.5);
    expect(idealSpeedup(4)).toBe(1.25);
  });

  it('the work tool answers with the duration it was given', async () => {
    const run = await runScriptedCall(workTool, {
      pieces: [
        { kind: 'field', path: ['ms'], value: 3 },
        { kind: 'field', path: ['payload'], value: 'alpha beta' },
      ],
      args: { ms: 3, payload: 'alpha beta' },
    });
    expect(run.verdicts).toEqual([undefined, undefined]);
    expect(run.result).toEqual({ ok: true, content: 'worked 3 ms', data: { ms: 3 } });
  });

  it('quick sweep: one row per point with every field, Markdown with the command, an SVG chart', { timeout: 90_000 }, async () => {
    const progress: Array<[number, number]> = [];
    const result = await runSweep({ quick: true, runs: 1, onProgress: (done, total) => progress.push([done, total]) });

    expect(result.points).toHaveLength(QUICK_INDICES.length);
    // In the JSON: the requests that are in no point's figures.
    expect(result.leftOut).toEqual({ warmupRuns: 2, calibrationRuns: QUICK_INDICES.length });
    expect(result.points.map((p) => p.targetRatio)).toEqual(QUICK_INDICES.map((i) => SWEEP_RATIOS[i]));
    for (const p of result.points) {
      for (const key of ['ratio', 'g', 't', 'offMs', 'onMs', 'predictedOnMs', 'predictedOffMs', 'errorPct'] as const) {
        expect(Number.isFinite(p[key]), key).toBe(true);
        expect(p[key], key).toBeGreaterThanOrEqual(0);
      }
      expect(p.g0).toBeLessThan(p.g);
      expect(p.off.n).toBe(1);
      expect(p.on.n).toBe(1);
    }

    const total = progress[0]![1];
    expect(progress.map(([done]) => done)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(progress.every(([, t]) => t === total)).toBe(true);

    expect(result.markdown).toContain('npx tsx bench/sweep/run.ts --quick --runs 1');
    expect(result.markdown.split('\n').filter((l) => /^\| \d/.test(l))).toHaveLength(QUICK_INDICES.length);

    const elements: string[] = [];
    let text = '';
    const parser = new Parser({ onopentag: (name) => elements.push(name), ontext: (t) => (text += t) }, { xmlMode: true });
    parser.write(result.svg);
    parser.end();
    expect(elements[0]).toBe('svg');
    expect(text).toContain('measured');
    expect(text).toContain('predicted');
  });
});
