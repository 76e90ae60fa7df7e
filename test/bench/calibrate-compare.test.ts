import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

// Two GPU runs as bench/calibrate/step_time.py writes them (decode points only matter here): one
// attention call per layer, and flash decoding, which wins at batch 1 over long contexts and loses
// at batch 32, where one call already fills the GPU.
function decodeRun(kvSplits: string, ms: (batch: number, context: number) => number) {
  const points = [1, 32].flatMap((batch) => [1024, 32768].map((context) => ({ batch, context })));
  return {
    measured_at: '2026-11-29T00:00:00+00:00',
    command: `python3 bench/calibrate/step_time.py --compile --kv-splits ${kvSplits} --out DIR`,
    device: 'synthetic',
    kv_splits: kvSplits,
    decode: points
      // 32 sequences of 32,768 tokens do not fit beside the weights: neither run has that point.
      .filter(({ batch, context }) => batch * context < 1_000_000)
      .map(({ batch, context }) => ({
        batch,
        context,
        kv_splits: kvSplits === 'auto' && batch === 1 ? 64 : 1,
        median_ms: ms(batch, context),
      })),
  };
}

const profile = {
  name: 'synthetic-profile',
  decode: { baseMs: 5, perSeqMs: 0, perContextTokenMs: 0.00003 },
};

describe('bench/calibrate/compare_decode.py', () => {
  const dir = suiteTempDir('conveyor-calibrate-compare-');

  it('puts the two runs side by side and checks the profile against the faster one at each point', async () => {
    const one = path.join(dir, 'one.json');
    const split = path.join(dir, 'split.json');
    const profileFile = path.join(dir, 'profile.json');
    await writeFile(one, JSON.stringify(decodeRun('1', (batch, context) => (context > 2048 && batch === 1 ? 16 : 5 + 0.00003 * batch * context))));
    await writeFile(split, JSON.stringify(decodeRun('auto', (batch, context) => (batch === 1 ? (context > 2048 ? 8 : 5) : 2 * (5 + 0.00003 * batch * context)))));
    await writeFile(profileFile, JSON.stringify(profile));

    const { stdout } = await run('python3', ['bench/calibrate/compare_decode.py', one, split, '--profile', profileFile], { cwd: root, timeout: 60_000 });

    expect(stdout).toContain('# Decode steps: one attention call (A) against --kv-splits auto (B) on synthetic');
    // Batch 1 over 32,768 tokens: split in 64 chunks, half the time; the plane (5.98 ms) is
    // checked against the split run's 8 ms, the faster.
    expect(stdout).toContain('| 1 | 32768 | 16.000 | 8.000 (64) | 0.50 | 5.983 | -25.2% |');
    expect(stdout).toContain('| 32 | 1024 | 5.983 | 11.966 | 2.00 | 5.983 | +0.0% |');
    expect(stdout).not.toContain('| 32 | 32768 |');
    expect(stdout).toContain("synthetic-profile's plane against the faster run, contexts beyond 2,048 (1 points): largest error -25.2% (batch 1, context 32,768)");
    expect(stdout).toMatch(/contexts up to 2,048 \(2 points\): largest error [+-]0\.\d%/);
  });

  it('refuses two runs that share no decode point', async () => {
    const a = path.join(dir, 'a.json');
    const b = path.join(dir, 'b.json');
    await writeFile(a, JSON.stringify(decodeRun('1', () => 5)));
    const other = decodeRun('auto', () => 5);
    await writeFile(b, JSON.stringify({ ...other, decode: other.decode.map((d) => ({ ...d, context: d.context * 2 })) }));

    await expect(run('python3', ['bench/calibrate/compare_decode.py', a, b], { cwd: root, timeout: 60_000 })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('the two runs share no decode point'),
    });
  });
});

describe('bench/calibrate/step_time_report.py with flash decoding', () => {
  const dir = suiteTempDir('conveyor-calibrate-splits-');

  it('says which decode points split their context, and by how much', async () => {
    const file = path.join(dir, 'step-time-compiled-kvsplits-auto.json');
    const result = decodeRun('auto', (batch, context) => 5 + 0.01 * batch + 0.00003 * batch * context);
    await writeFile(
      file,
      JSON.stringify({
        ...result,
        torch: 'n/a',
        cuda: null,
        dtype: 'bfloat16',
        weight_bytes: 14.5e9,
        copy_bandwidth_bytes_per_s: null,
        cuda_graphs: true,
        elementwise: 'torch.compile (fused Triton kernels)',
        kv_cache_tokens: 1_000_000,
        decode: result.decode.map((d) => ({ ...d, mean_ms: d.median_ms, min_ms: d.median_ms, max_ms: d.median_ms, n: 30 })),
        kv_split_check: { batch: 1, context: 32768, kv_splits: 64, max_difference: 1.2e-4 },
        decode_batch1_eager: null,
        prefill: [16, 1024, 4096].map((tokens) => ({ tokens, median_ms: 5 + 0.025 * Math.max(0, tokens - 100), n: 10 })),
        mixed: [],
        resume: [],
      }),
    );
    await run('python3', ['bench/calibrate/step_time_report.py', file], { cwd: root, timeout: 60_000 });

    const markdown = await readFile(path.join(dir, 'step-time-compiled-kvsplits-auto.md'), 'utf8');
    expect(markdown).toContain('Decode attention: flash decoding (`--kv-splits auto`)');
    expect(markdown).toContain('2 of 3 decode points split (the split count beside each). Merged against one call: max difference 1.2e-04.');
    expect(markdown).toMatch(/\| 1 \| [\d.]+ \(64\) \| [\d.]+ \(64\) \|/);
    expect(markdown).toMatch(/\| 32 \| [\d.]+ \| – \|/);
  });
});
