import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
