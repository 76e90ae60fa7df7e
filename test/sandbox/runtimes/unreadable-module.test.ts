import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { loadPluginModule, outsideUid } from '../../../sandbox/runtimes/load-plugin-module.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const KIT = fileURLToPath(new URL('../../../plugins/kit/index.ts', import.meta.url));

// As root the gateway imports a plugin module as root, but its process runs under a uid of its
// own, which reads what others may. A module in a 0700 folder (`mktemp -d`, `/root`) failed every
// call with Node's "Cannot find module '<the module>'", for a file that is plainly there.
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

describe.runIf(asRoot)('a plugin module in a folder closed to the plugin process', () => {
  let dir: string;
  let pools: RuntimePools;
  let closed: string;
  beforeAll(() => {
    // In the checkout (its .tmp is ignored), so `zod` resolves from the gateway's own node_modules.
    mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
    dir = mkdtempSync(path.join(ROOT, '.tmp', 'unreadable-module-'));
    chmodSync(dir, 0o755);
    closed = path.join(dir, 'closed');
    mkdirSync(closed, { mode: 0o700 });
    writeFileSync(
      path.join(closed, 'echo-plugin.ts'),
      `import { z } from 'zod';
import { definePlugin } from ${JSON.stringify(KIT)};
export default definePlugin({
  name: 'echo', description: 'Echoes.', runtime: 'process', consumes: 'call',
  parameters: z.object({ text: z.string() }),
  hooks: { onEnd: (args) => args.text },
});
`,
    );
    pools = createRuntimePools({ process: { uidBase: 1_900_720_000 } });
  });
  afterAll(async () => {
    await pools?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const call = async () => {
    const url = pathToFileURL(path.join(closed, 'echo-plugin.ts')).href;
    const tool = toolFromPlugin(await loadPluginModule(url), { moduleUrl: url, pools });
    return (await runScriptedCall(tool, { args: { text: 'hello' } })).result;
  };

  it('fails its calls naming the folder and the chmod that opens it, not "Cannot find module"', async (ctx) => {
    // Only where plugin processes run under uids of their own (a Node binary other uids cannot
    // read, as one under /root from npx, makes the sandbox fall back to the gateway's uid; CI's is readable).
    const { protections } = await pools.process.ready();
    if (!protections.uidDrop) ctx.skip();
    const result = await call();
    expect(result?.ok).toBe(false);
    expect(result?.content).toContain(`${closed} is closed to this process`);
    expect(result?.content).toContain(`chmod o+rx ${closed}`);
    expect(result?.content).not.toContain('Cannot find module');
    // The uid the chmod is for, as the host knows it: in a user namespace of its own (`unshare -r`)
    // the process is uid 0 to itself, and "closed to this process (uid 0)" read as root.
    expect(result?.content).toMatch(/ is closed to this process \(uid 1900720\d{3}\)/);
  }, 60_000);
});

describe('outsideUid', () => {
  it("maps a uid through /proc/self/uid_map to the namespace outside, and leaves an unmapped one", () => {
    expect(outsideUid(0, '         0 1900720001          1\n')).toBe(1900720001);
    expect(outsideUid(1000, '         0          0 4294967295\n')).toBe(1000);
    expect(outsideUid(5, '0 100 1\n10 200 10\n')).toBe(5);
    expect(outsideUid(12, '0 100 1\n10 200 10\n')).toBe(202);
  });
});
