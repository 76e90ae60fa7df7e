import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { GatewayConfigError } from '../core/errors.ts';
import { toolFromPlugin, type RuntimeTool } from '../plugins/kit/tool-from-plugin.ts';
import { loadPluginModule } from '../sandbox/runtimes/load-plugin-module.ts';
import type { RuntimePools } from '../sandbox/runtimes/runtime-pools.ts';

/**
 * The tools of plugin modules a tool author names (`conveyor serve --tool ./my-plugin.ts`): each
 * module's default export is a `definePlugin(...)`, run in the runtime it declares. Paths are
 * relative to the working directory (or `file:` URLs). A module that is missing or exports no
 * plugin stops the start-up with a GatewayConfigError naming it.
 */
export async function toolsFromModules(modules: readonly string[], pools: RuntimePools): Promise<RuntimeTool[]> {
  const tools: RuntimeTool[] = [];
  for (const module of modules) {
    const url = module.startsWith('file:') ? module : pathToFileURL(resolve(module)).href;
    // `npm start` runs in the checkout's root whatever folder it was typed in: say where it looked.
    if (!existsSync(fileURLToPath(url))) throw new GatewayConfigError(`tool module ${module}: no such file ${fileURLToPath(url)} (a path is taken from the working directory, ${process.cwd()})`);
    let tool: RuntimeTool;
    try {
      tool = toolFromPlugin(await loadPluginModule(url), { moduleUrl: url, pools });
    } catch (err) {
      throw new GatewayConfigError(`tool module ${module}: ${(err as Error).message}${hintFor(err)}`, { cause: err });
    }
    if (tools.some((t) => t.name === tool.name)) throw new GatewayConfigError(`tool module ${module}: a tool named ${tool.name} is already loaded`);
    // A process plugin's first call should not wait for Node to start.
    tool.warm();
    tools.push(tool);
  }
  return tools;
}

/**
 * A `.ts` or `.js` file outside a `"type": "module"` package is CommonJS to Node and tsx, and a
 * plugin module (ES `import`/`export`) then fails with require(esm) errors that do not say so.
 */
function hintFor(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const requireEsm = code === 'ERR_REQUIRE_CYCLE_MODULE' || code === 'ERR_REQUIRE_ESM' || /require\(\) ES Module/.test((err as Error)?.message ?? '');
  return requireEsm ? ' (a plugin module is an ES module: put a package.json with {"type": "module"} beside it, or name it .mts; plugins/README.md)' : '';
}
