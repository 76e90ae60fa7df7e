import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { toolsFromModules } from '../../gateway/tool-modules.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { createRuntimePools } from '../../sandbox/runtimes/runtime-pools.ts';

const HOSTILE_PLUGIN = fileURLToPath(new URL('../sandbox/runtimes/fixtures/hostile-plugin.ts', import.meta.url));

const pools = createRuntimePools();
const dataDir = mkdtempSync(path.join(tmpdir(), 'conveyor-tool-data-'));
afterAll(async () => {
  await pools.close();
  rmSync(dataDir, { recursive: true, force: true });
});

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
});
