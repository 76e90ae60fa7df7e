import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnOurGateway, spawnOverheadSim, type StartedPair } from '../../bench/overhead/bench-servers.ts';
import { runParserCpu } from '../../bench/overhead/parser-cpu.ts';
import { processCpuMs } from '../../bench/overhead/proc-cpu.ts';
import { runOverhead, STREAM_TOKENS } from '../../bench/overhead/run-overhead.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// Structure only: these run the real servers in their own processes, but never assert a timing.
describe('gateway overhead benchmark', () => {
  it('reads a process CPU time from /proc where there is one', () => {
    const ms = processCpuMs(process.pid);
    if (process.platform === 'linux') expect(ms).toBeGreaterThanOrEqual(0);
    else expect(ms).toBeNaN();
    expect(processCpuMs(2 ** 22 + 1)).toBeNaN();
  });

  it('runs the simulator on the profile it is given, and stops with its error when there is none', async () => {
    await expect(runOverhead({ quick: true, concurrency: [1], profile: 'no-such-profile' })).rejects.toThrow(/timing profile "no-such-profile" not found/);
  }, 60_000);

  // One simulator and one gateway for every run below, and one overhead run (with a baseline and
  // Portkey) for the two tests that read it: each test started its own set, and the gateway
  // start-ups (four, now two, each loading the whole product) were most of this file's 70–90 s, the likeliest
  // timeout of CI on a loaded 2-core machine.
  describe('on one simulator and gateway', () => {
    // On a profile of its own (--profile), a faster one than the default, to keep the runs short.
    const profile = path.join(mkdtempSync(path.join(os.tmpdir(), 'overhead-profile-')), 'quick.json');
    const progress: Array<[number, number]> = [];
    let pair: StartedPair | undefined;
    let run: Awaited<ReturnType<typeof runOverhead>>;

    beforeAll(async () => {
      writeFileSync(profile, JSON.stringify({ name: 'quick', description: 'test', source: 'test', decode: { baseMs: 1, perSeqMs: 0.01 }, prefill: { baseMs: 0.5, perTokenMs: 0.001 }, maxNumSeqs: 8, maxModelLen: 32768 }));
      const sim = await spawnOverheadSim(profile);
      pair = { sim, conveyor: await spawnOurGateway(sim.url).catch(async (err: unknown) => { await sim.close(); throw err; }) };
      // A directory is a baseline as well as a git ref: this checkout against itself.
      run = await runOverhead({ quick: true, concurrency: [1, 2], baseline: { dir: root, label: 'this checkout' }, profile, started: pair, onProgress: (done, total) => progress.push([done, total]) });
    }, 180_000);
    afterAll(async () => {
      await Promise.all([pair?.conveyor.close(), pair?.sim.close()]);
    });

    it('measures direct, our gateway and Portkey (or says why not) at each concurrency level', () => {
      const { markdown, json } = run;
      expect(progress.at(-1)?.[0]).toBe(progress.at(-1)?.[1]);
      expect(json.levels.map((l) => l.concurrency)).toEqual([1, 2]);
      const portkeyError = (json.meta.portkey as { error?: string }).error;
      const names = portkeyError ? ['direct', 'conveyor', 'baseline'] : ['direct', 'conveyor', 'baseline', 'portkey'];
      for (const level of json.levels) {
        expect(Object.keys(level.targets).sort()).toEqual([...names].sort());
        for (const name of names) {
          const t = level.targets[name as keyof typeof level.targets]!;
          expect(t.errors).toEqual([]);
          expect(t.streams).toBe(level.rounds * level.streamsPerRound);
          expect(t.shortStreams).toBe(0);
          expect(t.tokens).toBeGreaterThanOrEqual(t.streams * STREAM_TOKENS);
          // `missing`: streams with no content token, left out of the TTFT figures (35916a4); none here.
          for (const s of [t.ttftMs, t.itlMs]) expect(Object.keys(s).sort()).toEqual(['max', 'mean', 'min', 'missing', 'n', 'p50', 'p99', 'std']);
          expect(t.ttftMs.missing).toBe(0);
          expect(t.itlMs.n).toBe(t.streams * (STREAM_TOKENS - 1));
        }
        expect(Object.keys(level.added).sort()).toEqual(names.filter((n) => n !== 'direct').sort());
        expect(Object.keys(level.added.conveyor!).sort()).toEqual(['itlP50Ms', 'itlP99Ms', 'ttftP50Ms', 'ttftP99Ms']);
      }
      expect(json.target.concurrency).toBe(2);
      expect(typeof json.target.conveyorAddedTtftP50Ms).toBe('number');
      // Servers still busy with their start-up when measuring began are named (usually none).
      expect((json.meta.unsettled as string[]).filter((n) => !['sim', 'conveyor', `conveyor (${root})`, 'portkey'].includes(n))).toEqual([]);
      expect(markdown).toContain('| 2 | conveyor |');
      expect(markdown).toContain(portkeyError ? `Portkey could not run: ${portkeyError}` : '| 2 | portkey |');
    });

    it('times another version of our gateway in the same rounds with --baseline', () => {
      const { markdown, json } = run;
      for (const level of json.levels) {
        const before = level.targets.baseline!;
        expect(before.errors).toEqual([]);
        expect(before.streams).toBe(level.targets.conveyor!.streams);
        expect(before.shortStreams).toBe(0);
        expect(Object.keys(level.added.baseline!).sort()).toEqual(['itlP50Ms', 'itlP99Ms', 'ttftP50Ms', 'ttftP99Ms']);
      }
      expect(json.meta.baseline).toBe('this checkout');
      expect(markdown).toContain('| 1 | baseline |');
      expect(markdown).toContain('**baseline** = the same gateway as of `this checkout`');
      expect(json.meta.profile).toBe(profile);
      expect(markdown).toContain(`Simulator profile \`${profile}\``);
    });

    it('leaves the simulator and gateway it was given running, for the next run', async () => {
      for (const server of [pair!.sim, pair!.conveyor]) expect((await fetch(`${server.url}/models`)).ok).toBe(true);
    });

    // With a baseline (this checkout against itself, as above), whose gateway it starts and closes:
    // one run for both, a gateway's start-up being most of a quick run's time.
    it('measures gateway CPU per request with parsing and with tool_parser "none", in alternating rounds, beside a baseline', async () => {
      const { markdown, json } = await runParserCpu({ quick: true, profile, started: pair, baseline: { dir: root, label: 'this checkout' } });

      for (const side of [json, json.baseline!]) {
        expect(side.rounds.map((r) => r.mode)).toEqual(['parse', 'none', 'none', 'parse']);
        for (const mode of ['parse', 'none'] as const) {
          expect(side.checks[mode].errors).toEqual([]);
          expect(side.checks[mode].ok).toBe(side.checks[mode].requests);
          expect(side.perRequestUs[mode].n).toBe(2);
        }
        for (const r of side.rounds) expect(r.cpuUs).toBeGreaterThan(0);
        expect(Number.isFinite(side.differenceUs.mean)).toBe(true);
        expect(Number.isFinite(side.shareOfGatewayCpuPct)).toBe(true);
      }
      expect(json.baseline).toMatchObject({ label: 'this checkout', commit: null });
      expect(json.ratio!.pairs).toBe(2);
      for (const figure of ['parse', 'none'] as const) expect(json.ratio![figure]).toBeGreaterThan(0);
      expect(markdown).toContain('tool_parser: "none"');
      expect(markdown).toContain('**Against the baseline** `this checkout`');
      expect(json.meta.profile).toBe(profile);
    }, 180_000);
  });
});
