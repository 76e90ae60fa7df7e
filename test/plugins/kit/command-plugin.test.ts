import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntimePools, defineCommandPlugin, definePlugin, runScriptedCall, toolFromPlugin, type RuntimePools } from '../../../plugins/kit/index.ts';
import type { PluginDefinition } from '../../../plugins/kit/define-plugin.ts';
import { loadPluginModule } from '../../../sandbox/runtimes/load-plugin-module.ts';
import echo from '../../sandbox/runtimes/fixtures/echo-plugin.ts';

// Review 3, findings 4 and 7: a plugin in another language, the way plugins/README.md "Other languages" tells it.
const echoScript = new URL('../../../plugins/kit/examples/echo_plugin.py', import.meta.url).pathname;
const reverse = { name: 'reverse', description: 'Reverses a word', parameters: z.object({ text: z.string() }), consumes: 'field', limits: { timeoutMs: 5000 } } as const;
let pools: RuntimePools;
let dir: string;

beforeAll(() => {
  pools = createRuntimePools({ process: { uidBase: 1_900_460_000 } });
  dir = mkdtempSync(join(tmpdir(), 'command-plugin-'));
  // Readable by the sandbox's own uid, which runs crash.py.
  chmodSync(dir, 0o755);
});

afterAll(async () => {
  await pools?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('defineCommandPlugin', () => {
  it('takes a definition without hooks, its command given there or by toolFromPlugin', async () => {
    const withCommand = defineCommandPlugin({ ...reverse, command: ['/usr/bin/python3', echoScript] });
    const withoutCommand = defineCommandPlugin({ ...reverse, runtime: 'process' });
    const runs = [
      await runScriptedCall(toolFromPlugin(withCommand, { pools }), { args: { text: 'a' } }),
      await runScriptedCall(toolFromPlugin(withoutCommand, { command: ['/usr/bin/python3', echoScript], pools }), { args: { text: 'b' } }),
    ];
    expect(runs.map((r) => r.result?.content)).toEqual(['A', 'B']);
  });

  it('refuses hooks, a runtime other than process and a command that is no argv, naming what is wrong', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ hooks: { onEnd: () => 'x' } }, /a plugin with a command has no hooks/],
      [{ runtime: 'thread' }, /runs in runtime "process" only.*got "thread"/],
      [{ command: '/usr/bin/python3 x.py' }, /command must be the program and its arguments, a non-empty array of strings/],
      [{ command: [] }, /command must be/],
      [{ commands: ['x'] }, /unknown key 'commands' \(did you mean 'command'\?\)/],
      [{ limits: { timeout: 1 } }, /unknown key 'timeout' in limits/],
      [{ reuseProcess: true }, /reuseProcess is for JS plugins \(definePlugin\).*a command plugin gets a fresh process per call/],
    ];
    for (const [extra, message] of cases) {
      expect(() => defineCommandPlugin({ ...reverse, ...extra } as never), JSON.stringify(extra)).toThrow(message);
    }
  });

  it('definePlugin without hooks says where a plugin in another language goes', () => {
    expect(() => definePlugin({ ...reverse, runtime: 'process' } as never)).toThrow(
      /^plugin reverse: hooks must be an object with at least onEnd, got undefined; a plugin in another language names the program that runs it instead: defineCommandPlugin\(/,
    );
    expect(() => definePlugin({ ...reverse, command: ['x'] } as never)).toThrow(/command is for a plugin in another language, declared with defineCommandPlugin/);
  });

  it('toolFromPlugin: neither hooks nor a command is a clear error, and so is a command outside runtime process', () => {
    expect(() => toolFromPlugin({ ...reverse } as never, { pools })).toThrow(/^plugin reverse: it has no hooks and no command, so nothing to run: .*defineCommandPlugin/);
    expect(() => toolFromPlugin({ ...echo, runtime: 'thread' } as PluginDefinition, { command: ['/usr/bin/python3', echoScript], pools })).toThrow(
      'plugin echo_sample: a command runs in runtime "process" only, not "thread"',
    );
  });

  it('a module that default-exports it loads as a plugin module; one without a command is refused when its tool is made', async () => {
    const module = join(dir, 'no-command-plugin.ts');
    writeFileSync(module, "import { z } from 'zod';\nexport default { name: 'nocmd', description: 'x', parameters: z.object({ text: z.string() }), consumes: 'call', command: undefined };\n");
    const loaded = await loadPluginModule(pathToFileURL(module).href);
    expect(() => toolFromPlugin(loaded, { moduleUrl: pathToFileURL(module).href, pools })).toThrow(/no hooks and no command/);
  });

  it('a .py file loaded as a plugin module says how other languages are loaded', async () => {
    const script = join(dir, 'reverse_plugin.py');
    writeFileSync(script, 'print("hi")\n');
    await expect(loadPluginModule(pathToFileURL(script).href)).rejects.toThrow(
      /^Unknown file extension "\.py" for \/.*reverse_plugin\.py: a plugin module is JavaScript or TypeScript .*defineCommandPlugin\(\{ …, command: .*\), and that module is the one to load/,
    );
  });

  // Finding 7: it read `error: reverse the plugin process did not start: …`.
  it("a program that fails to start is the call's `failed: …` error, worded as in every runtime", async () => {
    const crash = join(dir, 'crash.py');
    writeFileSync(crash, 'import json\nraise RuntimeError("py boom")\n');
    const tool = toolFromPlugin(defineCommandPlugin({ ...reverse, command: ['/usr/bin/python3', crash] }), { pools });
    const run = await runScriptedCall(tool, { args: { text: 'x' } });
    expect(run.result).toMatchObject({
      ok: false,
      content: 'error: reverse failed: the plugin process did not start: exited with code 1 (RuntimeError: py boom)',
      data: { code: 'sandbox_error', runtime: 'process' },
    });
  });
});
