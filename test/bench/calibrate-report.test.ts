import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseTimingProfile } from '../../sim/timing-profile.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

// A GPU run as bench/calibrate/step_time.py writes it, made from a known step model, so the
// report must recover that model (the timing itself needs a GPU and lives in bench/results).
function syntheticResult() {
  const decodeMs = (batch: number, context: number) => 5 + 0.01 * batch + 0.00003 * batch * context;
  const oneSeq = decodeMs(1, 0);
  const prefillMs = (tokens: number) => oneSeq + 0.025 * Math.max(0, tokens - 100);
  const row = (median: number) => ({ median_ms: median, mean_ms: median, min_ms: median, max_ms: median, n: 30 });
  const batches = [1, 2, 4, 8, 16, 32, 64, 128, 256];
  return {
    measured_at: '2026-11-26T00:00:00+00:00',
    command: 'python3 bench/calibrate/step_time.py --compile --out DIR',
    device: 'synthetic',
    torch: 'n/a',
    cuda: null,
    dtype: 'bfloat16',
    weight_bytes: 14.5e9,
    copy_bandwidth_bytes_per_s: 4.2e12,
    weight_read_floor_ms: 3.45,
    cuda_graphs: true,
    elementwise: 'torch.compile (fused Triton kernels)',
    // 256 sequences of 2,048 tokens skipped, as on an 80 GB H100, where their KV cache does not fit.
    kv_cache_tokens: 500_401,
    decode: [512, 1024, 2048].flatMap((context) =>
      batches.filter((batch) => batch * context <= 500_401).map((batch) => ({ batch, context, ...row(decodeMs(batch, context)) })),
    ),
    decode_batch1_eager: row(15),
    prefill: [16, 64, 256, 512, 1024, 2048, 4096].map((tokens) => ({ tokens, ...row(prefillMs(tokens)) })),
    // A mixed step 10% dearer than the additive model, as measured on the H200.
    mixed: [1, 16].map((batch) => ({ batch, context: 1024, tokens: 512, ...row(1.1 * (decodeMs(batch, 1024) + 0.01 + 0.025 * 412)) })),
    // Resumed conversations: 2 ns per new token × cached token, on top of 1.3 ms of split attention
    // that the fit must see past (it only takes differences between prefixes).
    resume: [1024, 4096].flatMap((prefix) =>
      [0, 16].flatMap((batch) =>
        [16, 64, 256, 512].map((tokens) => ({
          batch,
          context: 1024,
          prefix,
          tokens,
          ...row(decodeMs(batch + 1, 0) + 0.00003 * batch * 1024 + 0.025 * Math.max(0, tokens - 100) + 1.3 + 2e-6 * tokens * prefix),
        })),
      ),
    ),
    resume_attention: 'two FlashAttention calls (cached prefix, new tokens) merged by their log-sum-exp',
  };
}

describe('bench/calibrate/step_time_report.py', () => {
  const dir = suiteTempDir('conveyor-calibrate-');

  it('fits the decode plane and the prefill knee, proposes a valid profile and checks mixed steps against it', async () => {
    const file = path.join(dir, 'step-time-compiled.json');
    await writeFile(file, JSON.stringify(syntheticResult()));
    await run('python3', ['bench/calibrate/step_time_report.py', file], { cwd: root, timeout: 60_000 });

    const result = JSON.parse(await readFile(file, 'utf8'));
    const proposed = result.proposed_profile;
    expect(proposed.decode).toEqual({ baseMs: 5, perSeqMs: 0.01, perContextTokenMs: 0.00003 });
    expect(result.fits.decode_model.max_rel_error).toBeLessThan(1e-9);
    expect(proposed.prefill).toEqual({ baseMs: 0, perTokenMs: 0.025, freeTokens: 100, perTokenContextMs: 2e-6 });
    expect(result.fits.prefill_context.max_abs_error_ms).toBeLessThan(1e-9);
    expect(result.fits.prefill_context.overhead_ms).toBeCloseTo(1.3, 9);
    expect(result.fits.prefill_knee.max_rel_error).toBeLessThan(1e-9);
    for (const mixed of result.mixed) expect(mixed.predicted_ms / mixed.median_ms).toBeCloseTo(1 / 1.1, 6);

    expect(() => parseTimingProfile({ name: 'calibrated', source: 'synthetic', maxNumSeqs: 256, maxModelLen: 32768, ...proposed })).not.toThrow();

    const markdown = await readFile(path.join(dir, 'step-time-compiled.md'), 'utf8');
    expect(markdown).toContain('| 256 | 11.492 | 15.424 | – |');
    expect(markdown).toContain("–: not measured; that batch's KV cache is larger than the 500,401 tokens the GPU held");
    expect(markdown).toContain('5.000 + 0.01000 × batch + 30.00 ns × batch × context, max error 0.0%');
    expect(markdown).toMatch(/\| 1 \| 512 \| [\d.]+ \| [\d.]+ \| -9\.1% \|/);
    expect(markdown).toContain('Proposed profile: `{"decode": {"baseMs": 5.0, "perSeqMs": 0.01, "perContextTokenMs": 3e-05}');
    expect(markdown).toContain('Each measured step holds ~1.30 ms (median, batch 0)');
    expect(markdown).toContain('2.000 ns × new tokens × extra cached tokens, max error 0.000 ms over 8 pairs');
    // 16 new tokens over 4,096 cached beside 16 decoding: charged all but the 1.3 ms.
    expect(markdown).toMatch(/\| 16 \| 4096 \| 16 \| ([\d.]+) \| ([\d.]+) \| -1[0-9]\.\d% \|/);
  });

  it('fits a run measured at one context, its KV read kept in perSeqMs (the plane needs two)', async () => {
    const full = syntheticResult();
    const file = path.join(dir, 'one-context.json');
    await writeFile(file, JSON.stringify({ ...full, decode: full.decode.filter((row) => row.context === 1024) }));
    await run('python3', ['bench/calibrate/step_time_report.py', file], { cwd: root, timeout: 60_000 });

    const proposed = JSON.parse(await readFile(file, 'utf8')).proposed_profile;
    // 5 + (0.01 + 0.00003 × 1,024) × batch.
    expect(proposed.decode).toEqual({ baseMs: 5, perSeqMs: 0.0407, perContextTokenMs: 0 });
  });
});
