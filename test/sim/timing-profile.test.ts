import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SimConfigError } from '../../core/errors.ts';
import { startSim } from '../../sim/sim-server.ts';
import { loadTimingProfile, PROFILES_DIR } from '../../sim/timing-profile.ts';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('timing profiles', () => {
  it('ships valid profiles, each with a source note', () => {
    const names = readdirSync(PROFILES_DIR).map((f) => f.replace(/\.json$/, ''));
    expect(names).toEqual(expect.arrayContaining(['mistral-7b-rtx3090', 'fast-test']));
    for (const name of names) {
      const profile = loadTimingProfile(name);
      expect(profile.name).toBe(name);
      expect(profile.source.length).toBeGreaterThan(40);
    }
  });

  it('models Mistral-7B fp16 on an RTX 3090 above the memory-bandwidth floor', () => {
    const p = loadTimingProfile('mistral-7b-rtx3090');
    // 14.5 GB of weights over 936 GB/s: no decode step can be faster than ~15.5 ms.
    expect(p.decode.baseMs).toBeGreaterThanOrEqual(15.5);
    expect(p.decode.baseMs).toBeLessThanOrEqual(25);
  });

  it('ships GPU-measured profiles whose batch-1 step sits above the weight-read floor of their card', () => {
    // 14.5 GB of bf16 weights over the copy bandwidth measured with them (bench/results/2026-11-26-step-time-*).
    for (const [name, floorMs] of [['mistral-7b-h200', 3.42], ['mistral-7b-h100', 4.79]] as const) {
      const p = loadTimingProfile(name);
      const batch1 = p.decode.baseMs + p.decode.perSeqMs;
      expect(batch1).toBeGreaterThan(floorMs);
      expect(batch1).toBeLessThan(2 * floorMs);
      expect(p.prefill.freeTokens).toBeGreaterThan(0);
      // Mistral-7B's KV cache is 128 KiB per token: the context term must be a plausible HBM read rate.
      const kvBytesPerSecond = (128 * 1024) / (p.decode.perContextTokenMs! / 1000);
      expect(kvBytesPerSecond).toBeGreaterThan(2e12);
      expect(kvBytesPerSecond).toBeLessThan(6e12);
      expect(p.source).toMatch(/bench\/calibrate\/step_time\.py/);
    }
  });

  it('loads a profile from a path and rejects invalid ones with SimConfigError', () => {
    dir = mkdtempSync(join(tmpdir(), 'sim-profile-'));
    const good = { name: 'custom', source: 'test', decode: { baseMs: 1, perSeqMs: 0 }, prefill: { baseMs: 0, perTokenMs: 0 }, maxNumSeqs: 1, maxModelLen: 64 };
    writeFileSync(join(dir, 'custom.json'), JSON.stringify(good));
    expect(loadTimingProfile(join(dir, 'custom.json'))).toEqual(good);
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...good, source: undefined, maxNumSeqs: 0 }));
    expect(() => loadTimingProfile(join(dir!, 'bad.json'))).toThrow(SimConfigError);
    expect(() => loadTimingProfile('no-such-profile')).toThrow(/not found/);
  });

  it('makes startSim reject on a bad profile instead of serving', async () => {
    await expect(startSim({ profile: 'no-such-profile' })).rejects.toBeInstanceOf(SimConfigError);
    await expect(startSim({ profile: 'fast-test', maxNumBatchedTokens: 0 })).rejects.toBeInstanceOf(SimConfigError);
  });

  it("takes vLLM's default token budget per step and batch size for the GPU each profile models", () => {
    // vLLM V1, OpenAI server: 8,192 tokens and 1,024 sequences on GPUs with >= 70 GiB other than the A100, 2,048 and 256 elsewhere.
    const defaults = ['mistral-7b-h100', 'mistral-7b-h200', 'mistral-7b-rtx3090'].map((name) => loadTimingProfile(name)).map((p) => [p.maxNumBatchedTokens, p.maxNumSeqs]);
    expect(defaults).toEqual([[8192, 1024], [8192, 1024], [2048, 256]]);
  });

  it('prefills a long prompt in budget-sized chunks when the server is given maxNumBatchedTokens', async () => {
    const prefillSteps = async (maxNumBatchedTokens?: number) => {
      const sim = await startSim({ profile: 'fast-test', maxNumBatchedTokens, prefixCacheTokens: 0 });
      try {
        const res = await fetch(`${sim.url}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mistral-7b-instruct-sim', max_tokens: 1, messages: [{ role: 'user', content: 'A long question. '.repeat(60) }] }),
        });
        const body = (await res.json()) as { usage: { prompt_tokens: number } };
        return { steps: sim.counters().prefillSteps, promptTokens: body.usage.prompt_tokens };
      } finally {
        await sim.close();
      }
    };
    const whole = await prefillSteps();
    const chunked = await prefillSteps(64);
    expect(whole.steps).toBe(1);
    expect(chunked.promptTokens).toBe(whole.promptTokens);
    expect(chunked.steps).toBe(Math.ceil(whole.promptTokens / 64));
  });
});
