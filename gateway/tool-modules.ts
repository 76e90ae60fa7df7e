import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { GatewayConfigError, type ConveyorError } from '../core/errors.ts';
import { toolFromPlugin, type RuntimeTool } from '../plugins/kit/tool-from-plugin.ts';
import { loadPluginModule } from '../sandbox/runtimes/load-plugin-module.ts';
import type { RuntimePools } from '../sandbox/runtimes/runtime-pools.ts';
import { DEFAULT_TOOL_MODULE_LOAD_MS, ToolModuleLoadTimeoutError, withinLoadTime } from './tool-module-load-time.ts';

/**
 * The tools of plugin modules a tool author names (`conveyor serve --tool ./my-plugin.ts`): each
 * module's default export is a `definePlugin(...)`, run in the runtime it declares. Paths are
 * relative to the working directory (or `file:` URLs); a query after the path
 * (`./my-plugin.ts?name=b`) is the module URL's, which the module reads from
 * `import.meta.url`. A module that is missing or exports no plugin stops the start-up with a
 * GatewayConfigError naming it; one whose import takes longer than `loadTimeoutMs` (30 s) with a
 * ToolModuleLoadTimeoutError.
 */
/**
 * A tool module, with what its sandbox may read beside the repository and Node (runtime `process`
 * or `isolate`; the others are not sandboxed): a data file its query names, say.
 */
export interface ToolModuleSpec {
  module: string;
  readOnlyPaths?: readonly string[];
}

/** The module as a plain path or URL, whatever form it was given in. */
export function modulePath(module: string | ToolModuleSpec): string {
  return typeof module === 'string' ? module : module.module;
}

export async function toolsFromModules(
  modules: ReadonlyArray<string | ToolModuleSpec>,
  pools: RuntimePools,
  options: { loadTimeoutMs?: number } = {},
): Promise<RuntimeTool[]> {
  const tools: RuntimeTool[] = [];
  const loadedFrom = new Map<string, string>();
  for (const spec of modules) {
    const module = modulePath(spec);
    const readOnlyPaths = typeof spec === 'string' ? undefined : spec.readOnlyPaths;
    const url = moduleUrl(module);
    const file = fileURLToPath(url);
    if (!existsSync(file)) throw new GatewayConfigError(`tool module ${module}: no such file${file === module ? '' : ` ${file}`}${whereFrom(module)}`);
    // Node's "Directory import … is not supported" said nothing of what to give instead.
    if (statSync(file).isDirectory()) throw new GatewayConfigError(`tool module ${module}: is a folder; name the plugin's module file in it${folderEntry(file)}`);
    // A grant of a path that is not there bound nothing, and the plugin's first read failed with
    // ENOENT inside its sandbox, far from the typo that caused it.
    const missing = readOnlyPaths?.find((p) => !existsSync(resolve(p)));
    if (missing !== undefined) {
      throw new GatewayConfigError(`tool module ${module}: read-only path ${missing}: no such file or folder${missing === resolve(missing) ? '' : ` ${resolve(missing)}`}${whereFrom(missing)}`);
    }
    let tool: RuntimeTool;
    try {
      const definition = await withoutExit(() => withinLoadTime(loadPluginModule(url), module, options.loadTimeoutMs ?? DEFAULT_TOOL_MODULE_LOAD_MS));
      tool = toolFromPlugin(definition, { moduleUrl: url, pools, ...(readOnlyPaths ? { readOnlyPaths: readOnlyPaths.map((p) => resolve(p)) } : {}) });
    } catch (err) {
      throw loadFailure(module, url, err);
    }
    const earlier = loadedFrom.get(tool.name);
    if (earlier !== undefined) throw new GatewayConfigError(`tool module ${module}: a tool named ${tool.name} is already loaded, from ${earlier}`);
    loadedFrom.set(tool.name, module);
    // A process plugin's first call should not wait for Node to start.
    tool.warm();
    tools.push(tool);
  }
  return tools;
}

/**
 * A module's top-level code runs in the gateway (its definition is read here, whatever its
 * runtime): a stray `process.exit(0)` there ended `conveyor serve` with status 0 and no word,
 * which a supervisor takes for a clean stop. While it is imported, exiting is its load's error.
 */
async function withoutExit<T>(load: () => Promise<T>): Promise<T> {
  const exit = process.exit;
  process.exit = ((code?: number | string | null) => {
    throw new Error(`its top-level code called process.exit(${code ?? ''}) as the gateway imported it: keep the top level to imports and the definition, and set up in onLoad`);
  }) as typeof process.exit;
  try {
    return await load();
  } finally {
    process.exit = exit;
  }
}

/**
 * The module's URL. A path may carry a query (`plugin.ts?name=a&mode=strict`, the way one module
 * serves as several tools); it stays a file name when a file of that very name exists.
 */
function moduleUrl(module: string): string {
  if (module.startsWith('file:')) return tsxSafe(module);
  const at = module.indexOf('?');
  if (at < 0 || existsSync(resolve(module))) return pathToFileURL(resolve(module)).href;
  return tsxSafe(`${pathToFileURL(resolve(module.slice(0, at))).href}${module.slice(at)}`);
}

/**
 * tsx (Node 20's TypeScript loader) takes a module's format from the end of its whole URL, query
 * included: `plugin.ts?file=data.json` is refused as "not of type json". An empty parameter at the
 * end changes nothing the plugin reads from searchParams.
 */
function tsxSafe(url: string): string {
  const parsed = new URL(url);
  if (!/\.[A-Za-z0-9]+$/.test(parsed.search)) return url;
  parsed.search += '&';
  return parsed.href;
}

/**
 * Where a module's path was taken from, for the not-found message. `npm start` runs in the
 * checkout's root whatever folder it was typed in, so a relative path names the working directory.
 * A config file's relative paths reach this function already resolved against the file's folder
 * (gateway/config-file.ts): an absolute path may have been relative there, and the message must
 * not send its author to the working directory.
 */
function whereFrom(module: string): string {
  if (module.startsWith('file:')) return '';
  if (!isAbsolute(module)) return ` (a relative path is taken from the working directory, ${process.cwd()})`;
  return ` (toolModules paths in a config file are relative to the file's folder; --tool paths to the working directory, ${process.cwd()})`;
}

/** This checkout: a module inside it resolves zod (and the rest) from the gateway's own node_modules. */
const CHECKOUT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/**
 * A module outside the checkout resolves its packages from its own folder up, as any ES module
 * does; a missing one (`Cannot find package 'zod'`, zod being what every plugin imports) gets the
 * install steps of plugins/README.md "Writing a plugin".
 */
function installHint(err: unknown, url: string): string {
  if ((err as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND') return '';
  const missing = /Cannot find package '([^']+)'/.exec((err as Error).message)?.[1];
  const file = fileURLToPath(new URL(url));
  if (missing === undefined || file.startsWith(`${CHECKOUT}/`)) return '';
  const install = missing === 'zod' ? 'zod@4' : missing;
  return (
    ` (a plugin outside the checkout resolves its own packages: beside it a package.json with {"type": "module"} and \`npm install ${install}\`` +
    ' run there; plugins/README.md)'
  );
}

/** Why a module did not load, as the one line the start-up stops with. */
function loadFailure(module: string, url: string, err: unknown): ConveyorError {
  if (err instanceof ToolModuleLoadTimeoutError) return err;
  const commonJs = commonJsHint(err, url);
  // A .cjs module that loads is "not a plugin" for whatever its module.exports lacks: say why first.
  if (commonJs && /\.c[jt]s$/.test(new URL(url).pathname)) {
    return new GatewayConfigError(`tool module ${module}: it is a CommonJS module${commonJs}; loading it said: ${firstLine(err)}`, { cause: err });
  }
  // Node's own words ("Cannot require() ES Module … in a cycle. A cycle involving require(esm) is not
  // allowed to maintain invariants …") are about its module graph, not about the plugin's mistake:
  // the fix leads, Node's first sentence follows for a search engine.
  if (isRequireEsm(err)) {
    return new GatewayConfigError(
      `tool module ${module}: Node loaded it as CommonJS, and a plugin module is an ES module: put a package.json with {"type": "module"} beside it, or name it .mts (plugins/README.md); Node said: ${firstSentence(err)}`,
      { cause: err },
    );
  }
  // Node's own advice after a CommonJS error's first line is about CommonJS scripts, which a plugin cannot be.
  const message = commonJs ? firstLine(err) : thrownValue(err);
  return new GatewayConfigError(`tool module ${module}: ${message}${commonJs || installHint(err, url)}`, { cause: err });
}

/** What the module threw: an Error's message, or the value itself (`throw 'a string'` is `a string`, not `undefined`). */
function thrownValue(err: unknown): string {
  const message = (err as { message?: unknown } | null)?.message;
  if (typeof message === 'string') return message;
  return typeof err === 'string' ? err : inspect(err, { breakLength: Infinity });
}

function firstLine(err: unknown): string {
  return thrownValue(err).split('\n')[0] ?? '';
}

function firstSentence(err: unknown): string {
  const line = firstLine(err);
  const end = line.indexOf('. ');
  return end < 0 ? line : line.slice(0, end + 1);
}

/** A `.ts` or `.js` file outside a `"type": "module"` package is CommonJS to Node and tsx: loading it as a plugin meets require(esm). */
function isRequireEsm(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ERR_REQUIRE_CYCLE_MODULE' || code === 'ERR_REQUIRE_ESM' || /require\(\) ES Module/.test(thrownValue(err));
}

/**
 * A plugin module is an ES module (`import`/`export`). CommonJS fails in ways that do not say so:
 * a `.cjs` file's `require` of the kit meets its `export` (`Unexpected token 'export'`), and
 * `require` in an ES module is not defined.
 */
function commonJsHint(err: unknown, url: string): string {
  const message = thrownValue(err);
  const commonJs = /\.c[jt]s$/.test(new URL(url).pathname) || /Unexpected token 'export'|Cannot use import statement outside a module|require is not defined|module is not defined/.test(message);
  return commonJs ? ' (plugins are ES modules: use .ts/.mjs/.js with import/export, not require/module.exports; plugins/README.md)' : '';
}

/** The folder's likely plugin module, for the error that names the folder: ", such as …/index.ts". */
function folderEntry(folder: string): string {
  const modules = readdirSync(folder).filter((name) => /\.(m?[jt]s)$/.test(name) && !/\.(test|spec|d)\.[cm]?[jt]s$/.test(name));
  const entry = modules.find((name) => /^(index|plugin)\./.test(name)) ?? (modules.length === 1 ? modules[0] : undefined);
  return entry === undefined ? '' : `, such as ${join(folder, entry)}`;
}
