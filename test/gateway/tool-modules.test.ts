import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ToolModuleLoadTimeoutError } from '../../gateway/tool-module-load-time.ts';
import { toolsFromModules } from '../../gateway/tool-modules.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { createRuntimePools } from '../../sandbox/runtimes/runtime-pools.ts';

const HOSTILE_PLUGIN = fileURLToPath(new URL('../sandbox/runtimes/fixtures/hostile-plugin.ts', import.meta.url));
const KIT = fileURLToPath(new URL('../../plugins/kit/index.ts', import.meta.url));

const pools = createRuntimePools();
const dataDir = mkdtempSync(path.join(tmpdir(), 'conveyor-tool-data-'));
const modulesDir = mkdtempSync(path.join(tmpdir(), 'conveyor-tool-modules-'));
afterAll(async () => {
  await pools.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(modulesDir, { recursive: true, force: true });
});

/** A module file in a folder of its own, as a tool author's is; `esm`: beside a package.json with {"type": "module"}. */
function moduleFile(name: string, source: string, { esm = true } = {}): string {
  const folder = mkdtempSync(path.join(modulesDir, 'm-'));
  if (esm) writeFileSync(path.join(folder, 'package.json'), JSON.stringify({ type: 'module' }));
  const file = path.join(folder, name);
  writeFileSync(file, source);
  return file;
}

/** Why toolsFromModules refused `module`. */
function refusal(module: string, options?: { loadTimeoutMs?: number }): Promise<Error> {
  return toolsFromModules([module], pools, options).then(
    () => new Error('loaded'),
    (err: Error) => err,
  );
}

describe('toolsFromModules', () => {
  it("grants a sandboxed module's process the readOnlyPaths it is given, and only those", async () => {
    // Readable by the unprivileged uid the plugin process runs as.
    chmodSync(dataDir, 0o755);
    const file = path.join(dataDir, 'rows.csv');
    writeFileSync(file, 'id,name\n1,Ada\n', { mode: 0o644 });
    const read = { args: { attack: 'read-file', target: file } };

    const [granted] = await toolsFromModules([{ module: HOSTILE_PLUGIN, readOnlyPaths: [dataDir] }], pools);
    expect((await runScriptedCall(granted!, read)).result).toMatchObject({ ok: true, content: 'read: id,name\n1,Ada\n' });

    const { setup } = await pools.process.ready();
    if (setup.mode === 'bwrap') {
      // The same module without the grant: its sandbox has no such file.
      const [plain] = await toolsFromModules([`${HOSTILE_PLUGIN}?plain`], pools);
      const { result } = await runScriptedCall(plain!, read);
      expect(result).toMatchObject({ ok: false, content: expect.stringContaining('ENOENT') });
    }
  }, 60_000);

  // A grant that named nothing bound nothing: the plugin's first read failed with ENOENT in its sandbox.
  it('refuses a readOnlyPaths entry that does not exist, naming it and the module', async () => {
    const missing = path.join(dataDir, 'no-such-folder');
    const err = await toolsFromModules([{ module: HOSTILE_PLUGIN, readOnlyPaths: [dataDir, missing] }], pools).then(
      () => new Error('loaded'),
      (e: Error) => e,
    );
    expect(err).toMatchObject({
      code: 'gateway_config_invalid',
      message: `tool module ${HOSTILE_PLUGIN}: read-only path ${missing}: no such file or folder (toolModules paths in a config file are relative to the file's folder; --tool paths to the working directory, ${process.cwd()})`,
    });
  });

  // Node's own words were "Directory import '…' is not supported resolving ES modules imported from …".
  it("refuses a folder given for a module, naming the folder's likely module file", async () => {
    const module = moduleFile('index.ts', 'export default 1;\n');
    const folder = path.dirname(module);
    writeFileSync(path.join(folder, 'index.test.ts'), '');
    expect(await refusal(folder)).toMatchObject({ code: 'gateway_config_invalid', message: `tool module ${folder}: is a folder; name the plugin's module file in it, such as ${module}` });
    const empty = mkdtempSync(path.join(modulesDir, 'empty-'));
    expect((await refusal(empty)).message).toBe(`tool module ${empty}: is a folder; name the plugin's module file in it`);
  });

  // Node ended `conveyor serve` with status 13 and no word (an unsettled top-level await: nothing
  // was left on the event loop), and a merely slow one held the start-up with no message.
  it('stops at a module whose top-level await does not settle within loadTimeoutMs, naming it', async () => {
    const module = moduleFile('never.ts', 'await new Promise(() => {});\nexport default 1;\n');
    const started = performance.now();
    const err = await refusal(module, { loadTimeoutMs: 300 });
    expect(err).toBeInstanceOf(ToolModuleLoadTimeoutError);
    expect(err).toMatchObject({ code: 'tool_module_load_timeout', message: `tool module ${module}: it did not finish loading within 0.3 s (a top-level await that never settles?)` });
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('waits for a module whose top-level await settles in time', async () => {
    const module = moduleFile(
      'slow.ts',
      `import { z } from ${JSON.stringify(fileURLToPath(import.meta.resolve('zod')))};\nimport { definePlugin } from ${JSON.stringify(KIT)};\n` +
        `await new Promise((resolve) => setTimeout(resolve, 200));\n` +
        `export default definePlugin({ name: 'slow_loader', description: 'x', parameters: z.object({}), consumes: 'call', runtime: 'inline', hooks: { onEnd: () => 'ok' } });\n`,
    );
    const [tool] = await toolsFromModules([module], pools, { loadTimeoutMs: 10_000 });
    expect(tool?.name).toBe('slow_loader');
  });

  // It read `tool module …: undefined`: the message of a thrown string.
  it('quotes what a module threw at import when it is not an Error', async () => {
    const throwsString = moduleFile('throws-string.ts', "throw 'a string';\n");
    expect((await refusal(throwsString)).message).toBe(`tool module ${throwsString}: a string`);
    const throwsObject = moduleFile('throws-object.ts', 'throw { reason: 42 };\n');
    expect((await refusal(throwsObject)).message).toBe(`tool module ${throwsObject}: { reason: 42 }`);
  });
});
