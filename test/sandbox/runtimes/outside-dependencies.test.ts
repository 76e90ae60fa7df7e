import { chmodSync, cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { loadPluginModule } from '../../../sandbox/runtimes/load-plugin-module.ts';
import { sandboxReadPaths } from '../../../sandbox/runtimes/node-recipe.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';

const GATEWAY_ROOT = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');
const KIT = fileURLToPath(new URL('../../../plugins/kit/index.ts', import.meta.url));

/**
 * A plugin outside the checkout whose packages live elsewhere, as `npm link`, a node_modules
 * shared between projects and a workspace's hoisted install leave them:
 *
 *   shared/node_modules/zod          (a real copy)
 *   shared/node_modules/@tools/fmt → linked/fmt
 *   app/node_modules/hoisted/        (found from app/plugin by walking up)
 *   app/plugin/package.json, plugin.ts
 *   app/plugin/node_modules → ../../shared/node_modules
 */
let dir: string;
let pools: RuntimePools;

beforeAll(() => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'conveyor-outside-deps-')));
  // The plugin process runs as a uid of its own: the folders must be readable by others, as an install is.
  chmodSync(dir, 0o755);
  const shared = path.join(dir, 'shared', 'node_modules');
  mkdirSync(path.join(shared, '@tools'), { recursive: true });
  cpSync(fileURLToPath(new URL('../../../node_modules/zod', import.meta.url)), path.join(shared, 'zod'), { recursive: true, dereference: true });
  mkdirSync(path.join(dir, 'linked', 'fmt'), { recursive: true });
  writeFileSync(path.join(dir, 'linked', 'fmt', 'package.json'), JSON.stringify({ name: '@tools/fmt', type: 'module', exports: './index.js' }));
  writeFileSync(path.join(dir, 'linked', 'fmt', 'index.js'), 'export const shout = (s) => s.toUpperCase();\n');
  symlinkSync(path.join(dir, 'linked', 'fmt'), path.join(shared, '@tools', 'fmt'));
  mkdirSync(path.join(dir, 'app', 'node_modules', 'hoisted'), { recursive: true });
  writeFileSync(path.join(dir, 'app', 'node_modules', 'hoisted', 'package.json'), JSON.stringify({ name: 'hoisted', type: 'module', exports: './index.js' }));
  writeFileSync(path.join(dir, 'app', 'node_modules', 'hoisted', 'index.js'), "export const suffix = '!';\n");
  const plugin = path.join(dir, 'app', 'plugin');
  mkdirSync(plugin, { recursive: true });
  writeFileSync(path.join(plugin, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync('../../shared/node_modules', path.join(plugin, 'node_modules'));
  writeFileSync(
    path.join(plugin, 'plugin.ts'),
    `import { z } from 'zod';
import { shout } from '@tools/fmt';
import { suffix } from 'hoisted';
import { definePlugin } from ${JSON.stringify(KIT)};
export default definePlugin({
  name: 'shout', description: 'Shouts.', runtime: 'process', consumes: 'call',
  parameters: z.object({ text: z.string() }),
  hooks: { onEnd: (args) => shout(args.text) + suffix },
});
`,
  );
  pools = createRuntimePools({ process: { uidBase: 1_900_400_000 } });
});

afterAll(async () => {
  await pools?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a plugin whose packages resolve outside its folder', () => {
  it('is granted the folders its imports resolve to: a symlinked node_modules, a linked package, a hoisted install', () => {
    const paths = sandboxReadPaths(GATEWAY_ROOT, pathToFileURL(path.join(dir, 'app', 'plugin', 'plugin.ts')).href);
    expect(paths).toEqual(expect.arrayContaining([path.join(dir, 'app', 'plugin'), path.join(dir, 'shared', 'node_modules'), path.join(dir, 'linked', 'fmt'), path.join(dir, 'app', 'node_modules')]));
    // Nothing granted twice: the gateway's own node_modules is inside its root.
    expect(paths.filter((p) => p.startsWith(`${GATEWAY_ROOT}/`))).toEqual([]);
  });

  it('never widens the sandbox to what a link points at that is no package, to a folder holding the gateway or the plugin, or to a node_modules anyone may plant', () => {
    const plugin = path.join(dir, 'hostile', 'sticky', 'proj', 'plugin');
    mkdirSync(path.join(plugin, 'node_modules', '@s'), { recursive: true });
    writeFileSync(path.join(plugin, 'package.json'), '{}');
    symlinkSync('/', path.join(plugin, 'node_modules', 'evil'));
    symlinkSync('/etc', path.join(plugin, 'node_modules', '@s', 'x'));
    // A package.json there does not make the gateway's parent folder a package to grant.
    symlinkSync(path.dirname(GATEWAY_ROOT), path.join(plugin, 'node_modules', 'up'));
    // A sticky, world-writable folder (as /tmp) whose node_modules another user could have planted.
    const sticky = path.join(dir, 'hostile', 'sticky');
    mkdirSync(path.join(sticky, 'node_modules', 'planted'), { recursive: true });
    writeFileSync(path.join(sticky, 'node_modules', 'planted', 'package.json'), '{}');
    chmodSync(sticky, 0o1777);
    const paths = sandboxReadPaths(GATEWAY_ROOT, pathToFileURL(path.join(plugin, 'p.mjs')).href);
    expect(paths).not.toContain('/');
    expect(paths).not.toContain('/etc');
    expect(paths).not.toContain(path.dirname(GATEWAY_ROOT));
    expect(paths).not.toContain(path.join(sticky, 'node_modules'));
    // What is left: the gateway, Node, the plugin's own folder (its node_modules inside it).
    expect(paths.every((p) => p === plugin || p === GATEWAY_ROOT || p === path.dirname(path.dirname(process.execPath)))).toBe(true);
  });

  it('runs in a sandboxed process, where every import resolves as it did in the gateway', async () => {
    const url = pathToFileURL(path.join(dir, 'app', 'plugin', 'plugin.ts')).href;
    const tool = toolFromPlugin(await loadPluginModule(url), { moduleUrl: url, pools });
    const run = await runScriptedCall(tool, { args: { text: 'hello' } });
    expect(run.result, JSON.stringify(run.result)).toMatchObject({ ok: true, content: 'HELLO!' });
  }, 60_000);
});
