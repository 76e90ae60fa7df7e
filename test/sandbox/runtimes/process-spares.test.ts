import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineCommandPlugin } from '../../../plugins/kit/define-command-plugin.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from './fixtures/echo-plugin.ts';
import { eventually, fixture, killAll } from './runtime-test-helpers.ts';

let pools: RuntimePools;
// A staging root left by a gateway killed with SIGKILL (its pid has exited).
const stale = mkdtempSync(join(tmpdir(), 'conveyor-plugins-'));
writeFileSync(join(stale, 'owner.pid'), `${spawnSync(process.execPath, ['-e', '']).pid}\n`);

beforeAll(async () => {
  pools = createRuntimePools({ process: { maxProcesses: 4, maxQueue: 4, sparesPerPlugin: 1, uidBase: 1_900_300_000 } });
  await pools.process.ready();
});

afterAll(async () => {
  await pools?.close();
  rmSync(stale, { recursive: true, force: true });
});

/** A spare's start is a node process's cold start: seconds on a busy 2-core machine, not the helper's default 3 s. */
const settled = (condition: () => boolean) => eventually(condition, 1500);

const call = () =>
  runScriptedCall(toolFromPlugin(echo, { moduleUrl: fixture('echo-plugin.ts'), pools }), {
    pieces: [{ kind: 'field', path: ['text'], value: 'hi' }],
    args: { text: 'hi' },
  });

describe('warm spares of the process runtime', () => {
  it('a spare that dies while it waits gives its place up, and the next call warms a live one', async () => {
    expect((await call()).result).toMatchObject({ ok: true, content: 'HI' });
    // The pool made its staging root for that call, and removed the dead gateway's first.
    expect(existsSync(stale)).toBe(false);
    // The call's process has gone; what is left is the spare warmed for the next call.
    expect(await settled(() => pools.process.stats.spares === 1 && pools.process.livePids().length > 0)).toBe(true);
    killAll(pools.process.livePids());
    expect(await settled(() => pools.process.stats.spares === 0)).toBe(true);

    expect((await call()).result).toMatchObject({ ok: true, content: 'HI' });
    expect(await settled(() => pools.process.stats.spares === 1 && pools.process.livePids().length > 0)).toBe(true);
  });
});

// A spare whose start failed was given up without a word: no call sees it (the next call starts a
// process of its own), so a plugin whose program failed at start-up showed it nowhere but in the
// errors of the calls that followed, and one that failed only now and then not at all.
describe('a warm spare whose start fails', () => {
  it('is reported with its plugin and why, and the next call starts a process of its own and runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flaky-spare-'));
    // Readable by the sandbox's own uid, which runs the script.
    chmodSync(dir, 0o755);
    const mode = join(dir, 'mode');
    const script = join(dir, 'flaky.sh');
    const echoScript = new URL('../../../plugins/kit/examples/echo_plugin.py', import.meta.url).pathname;
    writeFileSync(mode, 'fail\n', { mode: 0o644 });
    writeFileSync(script, `if [ "$(cat ${mode})" = fail ]; then echo 'told to fail at start-up' >&2; exit 3; fi\nexec /usr/bin/python3 "$1"\n`, { mode: 0o755 });
    const reports: Array<{ plugin: string; reason: string }> = [];
    const flaky = createRuntimePools({
      process: {
        maxProcesses: 2,
        sparesPerPlugin: 1,
        uidBase: 1_900_350_000,
        onSpareFailure: (failure) => {
          reports.push(failure);
          // A log that throws must not turn the spare's failure into the next call's.
          throw new Error('the log is broken too');
        },
      },
    });
    try {
      // The example is named in the command, so the sandbox is granted its folder.
      const flakyEcho = defineCommandPlugin({ name: 'flaky_echo', description: 'Upper-cases a text', parameters: z.object({ text: z.string() }), consumes: 'field', command: ['/bin/sh', script, echoScript] });
      const tool = toolFromPlugin(flakyEcho, { pools: flaky });
      tool.warm();
      expect(await settled(() => reports.length > 0)).toBe(true);
      expect(reports).toEqual([{ plugin: 'flaky_echo', reason: 'the plugin process did not start: exited with code 3 (told to fail at start-up)' }]);
      expect(flaky.process.stats.spares).toBe(0);

      writeFileSync(mode, 'ok\n');
      const run = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['text'], value: 'hi' }], args: { text: 'hi' } });
      expect(run.result).toMatchObject({ ok: true, content: 'HI' });
      // That call warmed a spare for the next, which started: nothing more to report.
      expect(await settled(() => flaky.process.stats.spares === 1 && flaky.process.livePids().length > 0)).toBe(true);
      expect(reports).toHaveLength(1);
    } finally {
      await flaky.close();
      rmSync(dir, { recursive: true, force: true });
    }
    // Spares close() stops are not failures.
    expect(reports).toHaveLength(1);
  });
});
