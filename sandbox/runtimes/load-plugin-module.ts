import { accessSync, constants, readFileSync } from 'node:fs';
import { dirname, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { thrownMessage } from '../../core/errors.ts';
import { isCommandPlugin, type CommandPluginDefinition } from '../../plugins/kit/define-command-plugin.ts';
import { definitionProblem } from '../../plugins/kit/check-definition.ts';
import { toolResultOf } from '../../plugins/kit/check-hook-output.ts';
import type { PluginContext, PluginDefinition } from '../../plugins/kit/define-plugin.ts';
import type { ToolResult } from '../../plugins/plugin-types.ts';
import { nativeTypeScript } from './node-recipe.ts';
import { hookThrowOf, type HookThrow } from './hook-throw.ts';
import { PluginNameMismatchError } from './plugin-name-mismatch.ts';
import { boundedOnLoad, ON_LOAD_LIMIT_MS, OnLoadFailedError, OnLoadLimitError } from './on-load-limit.ts';

const cache = new Map<string, Promise<PluginDefinition | CommandPluginDefinition>>();

/**
 * Imports a plugin module (in the gateway, a worker or a plugin process) and returns its default
 * export, which must be a `definePlugin(...)` or `defineCommandPlugin(...)` result. Cached per URL
 * for the life of the process.
 */
export function loadPluginModule(url: string): Promise<PluginDefinition | CommandPluginDefinition> {
  let loading = cache.get(url);
  if (!loading) {
    const notJs = notJavaScript(url);
    loading = notJs
      ? Promise.reject(notJs)
      : importModule(url).then(
          (mod: { default?: unknown }) => asDefinition(mod.default, url),
          (err: unknown) => {
            throw unreadableModule(url, err) ?? err;
          },
        );
    cache.set(url, loading);
  }
  return loading;
}

const ready = new Map<string, Promise<() => Promise<PluginDefinition>>>();

/**
 * The plugin as the runtime that runs its calls (a worker, a plugin process) needs it: imported,
 * and its onLoad hook run once in this process or thread, from the import on. A throwing onLoad
 * fails every call; one still running `onLoadLimitMs` after it began fails the calls that wait for
 * it with an OnLoadLimitError (on-load-limit.ts), in every runtime alike.
 */
export function loadPluginForCalls(url: string, onLoadLimitMs = ON_LOAD_LIMIT_MS): Promise<PluginDefinition> {
  let loading = ready.get(url);
  if (!loading) {
    loading = loadPluginModule(url).then((definition) => {
      if (isCommandPlugin(definition)) {
        throw new TypeError(`${url}: plugin ${definition.name} has a command, not hooks: its program runs in runtime "process", given as toolFromPlugin's definition`);
      }
      const loaded = boundedOnLoad(definition.hooks.onLoad, onLoadLimitMs);
      return async () => {
        await loaded();
        return definition;
      };
    });
    ready.set(url, loading);
  }
  return loading.then((whenLoaded) => whenLoaded());
}

/**
 * Errors of Node's own type stripping that tsx does not have: syntax that needs a transform
 * (enums, namespaces, parameter properties), TypeScript under node_modules, .tsx/.cts files,
 * `./x.js` naming `./x.ts`, and a type imported without `import type` (a SyntaxError at link time).
 * A SyntaxError the module's own top level throws (a bad JSON.parse) also gets the second try and
 * fails again the same way; its top level then runs twice, which a plugin module should afford
 * anyway (every process and worker imports it afresh).
 */
const TSX_CAN_LOAD = new Set([
  'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX',
  'ERR_INVALID_TYPESCRIPT_SYNTAX',
  'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING',
  'ERR_UNKNOWN_FILE_EXTENSION',
  'ERR_MODULE_NOT_FOUND',
]);

/**
 * Where Node strips types itself (node-recipe.ts: nativeTypeScript), processes and workers start
 * without tsx, and a plugin module Node cannot run as it is is loaded again through tsx, in a
 * namespace of its own (tsImport) so no half-linked module of the first try is reused.
 */
async function importModule(url: string): Promise<{ default?: unknown }> {
  if (!nativeTypeScript()) return import(url);
  try {
    return await import(url);
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (!(err instanceof SyntaxError) && !(typeof code === 'string' && TSX_CAN_LOAD.has(code))) throw err;
    const { tsImport } = await import('tsx/esm/api');
    return tsImport(url, import.meta.url) as Promise<{ default?: unknown }>;
  }
}

/**
 * A module this process may not read: a gateway run as root runs plugin processes (and isolate
 * hosts) under uids of their own, which read what *others* may. A folder on the way that is 0700
 * (`mktemp -d`, `/root`) made every call fail with Node's "Cannot find module '<the module>'", for
 * a file that is plainly there. The first folder (or the file) that stops this uid is named.
 */
function unreadableModule(url: string, err: unknown): Error | undefined {
  if ((err as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND' || !url.startsWith('file:')) return undefined;
  const file = fileURLToPath(new URL(url));
  const folders: string[] = [];
  for (let dir = dirname(file); !folders.includes(dir); dir = dirname(dir)) folders.unshift(dir);
  const blocked = [...folders.map((dir) => [dir, constants.X_OK] as const), [file, constants.R_OK] as const].find(([path, mode]) => !accessible(path, mode));
  if (blocked === undefined) return undefined;
  const [path, mode] = blocked;
  const own = hostUid();
  const uid = own === undefined ? '' : ` (uid ${own})`;
  const fix = mode === constants.R_OK ? `chmod o+r ${path}` : `chmod o+rx ${path}`;
  return new Error(
    `cannot read plugin module ${file}: ${path} is closed to this process${uid}; a gateway run as root runs plugin processes under uids of their own, which read what others may: ${fix}, or keep the module elsewhere`,
    { cause: err },
  );
}

/**
 * This process's uid as the host sees it. A plugin process in a user namespace of its own
 * (`unshare -r` maps its uid to 0) said "closed to this process (uid 0)", which reads as root, the
 * one uid every folder is open to, not the uid a chmod is for.
 */
function hostUid(): number | undefined {
  if (typeof process.getuid !== 'function') return undefined;
  const uid = process.getuid();
  // Only 0 is the namespace's own: under bwrap the process keeps the uid it was started with,
  // and its uid_map names the namespace bwrap was run from, not the host (0 there, seen in CI).
  if (uid !== 0) return uid;
  try {
    return outsideUid(uid, readFileSync('/proc/self/uid_map', 'utf8'));
  } catch {
    return uid;
  }
}

/** `uid` mapped through a uid_map (`inside outside count` per line) to the namespace outside. */
export function outsideUid(uid: number, uidMap: string): number {
  for (const line of uidMap.split('\n')) {
    const [inside, outside, count] = line.trim().split(/\s+/).map(Number);
    if (inside !== undefined && outside !== undefined && count !== undefined && uid >= inside && uid < inside + count) return outside + (uid - inside);
  }
  return uid;
}

/** Whether this process may reach a folder (X_OK) or read a file (R_OK); a path that is not there counts as reachable (Node's own error stands). */
function accessible(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch (err) {
    return (err as { code?: unknown }).code !== 'EACCES';
  }
}

function asDefinition(value: unknown, url: string): PluginDefinition | CommandPluginDefinition {
  if (value === undefined) throw new TypeError(`${url} has no default export; export default definePlugin({...})`);
  const problem = definitionProblem(value);
  if (problem !== undefined) throw new TypeError(`${url}: its default export is not a plugin: ${problem}`);
  return value as PluginDefinition | CommandPluginDefinition;
}

/** What Node and tsx import as a module: anything else, a plugin module cannot be. */
const JS_FILE = /\.(?:[cm]?[jt]s|[jt]sx)$/;

/**
 * `--tool my_plugin.py` met only Node's `Unknown file extension ".py"` (and vitest ran the file as
 * JS): a plugin module is JS or TypeScript, and one in another language is loaded through one that
 * names its command. Undefined for a file that may be a module.
 */
function notJavaScript(url: string): Error | undefined {
  const path = url.startsWith('file:') ? fileURLToPath(new URL(url)) : '';
  const ext = extname(path);
  if (ext === '' || JS_FILE.test(path)) return undefined;
  return Object.assign(
    new TypeError(
      `Unknown file extension "${ext}" for ${path}: a plugin module is JavaScript or TypeScript (.ts, .mts, .js, .mjs); a plugin in another language is declared in one, ` +
        "with defineCommandPlugin({ …, command: ['/usr/bin/python3', '/abs/plugin.py'] }), and that module is the one to load (plugins/README.md \"Other languages\")",
    ),
    { code: 'ERR_UNKNOWN_FILE_EXTENSION' },
  );
}

/** What runEndHook tells its runtime besides the result. */
export interface EndHookReports {
  /** onEnd threw: its stack, for the gateway log. */
  onThrow?: (thrown: HookThrow) => void;
  /**
   * The schema threw as it parsed (it passed the gateway's parse: a transform that throws only
   * here): the call fails as a hook's throw does, onAbort included, and onEnd does not run. The
   * runtime ends the call with `failure`, which is also what runEndHook returns.
   */
  onParseThrow?: (failure: ToolResult) => void;
}

/**
 * Validates the decoded arguments and runs onEnd; every failure becomes a tool error result. A
 * throw also goes to `reports.onThrow`, with its stack, for the gateway log.
 */
export async function runEndHook(definition: PluginDefinition, rawArgs: Record<string, unknown>, ctx: PluginContext, reports: EndHookReports = {}): Promise<ToolResult> {
  const { onThrow = () => undefined, onParseThrow = () => undefined } = reports;
  // Parsed again where onEnd runs, for the schema's output: a bare safeParse let a throw escape
  // here, which ended a plugin process with an unhandled rejection (`exited with code 1`).
  let threw: ToolResult | undefined;
  const parsed = safeParseOr(definition, rawArgs, (failure) => (threw = failure));
  if (!parsed) {
    const failure = threw as ToolResult;
    onParseThrow(failure);
    return failure;
  }
  if (!parsed.success) return { ok: false, content: `error: ${definition.name} ${invalidArguments(parsed.error)}`, data: { code: 'invalid_arguments' } };
  let value: unknown;
  try {
    value = await definition.hooks.onEnd(parsed.data, ctx);
  } catch (err) {
    const thrown = hookThrowOf('onEnd', err);
    if (thrown) onThrow(thrown);
    return hookFailure(definition.name, err);
  }
  try {
    return toolResultOf(definition.name, value);
  } catch (err) {
    // A getter in the result that throws as it is read.
    return hookFailure(definition.name, err);
  }
}

/**
 * `definition.parameters.safeParse(rawArgs)`, or undefined after `onThrow` got the call's failure
 * (worded as a hook's throw) where the schema threw rather than reporting an issue: a transform
 * or refine that throws. Shared so that thread, process and isolate word it alike.
 */
export function safeParseOr(
  definition: Pick<PluginDefinition, 'name' | 'parameters'>,
  rawArgs: Record<string, unknown>,
  onThrow: (failure: ToolResult) => void,
): ReturnType<PluginDefinition['parameters']['safeParse']> | undefined {
  try {
    return definition.parameters.safeParse(rawArgs);
  } catch (err) {
    // zod's own words ("Use .parseAsync() instead") name a method the author never calls. By name
    // too: a plugin with a zod of its own throws that copy's class.
    const asyncSchema = err instanceof z.core.$ZodAsyncError || (err as object | null)?.constructor?.name === '$ZodAsyncError';
    onThrow(asyncSchema ? { ok: false, content: `error: ${definition.name} failed: ${ASYNC_SCHEMA}` } : hookFailure(definition.name, err));
    return undefined;
  }
}

/**
 * Why a schema with an async refine or transform fails every call: arguments are parsed
 * synchronously, in every runtime (plugins/README.md, Hooks), so that a check that waits on
 * something runs in onEnd, under the call's time limit and ctx.signal.
 */
const ASYNC_SCHEMA = 'its parameters schema has an async refine or transform, and arguments are parsed synchronously: check them in onEnd instead (it may be async)';

/** How every runtime words a call whose arguments fail the schema (after `error: <tool> `). */
export function invalidArguments(error: z.ZodError): string {
  return `got invalid arguments: ${z.prettifyError(error)}`;
}

/**
 * A hook threw: the call's tool error, worded alike in every runtime. An onLoad past its limit is
 * the runtime's limit, not the plugin's throw: `error: <tool> onLoad did not finish within N ms`;
 * an onLoad that threw says so: `error: <tool> onLoad failed: <message>`.
 */
export function hookFailure(plugin: string, err: unknown): ToolResult {
  if (err instanceof OnLoadLimitError) return { ok: false, content: `error: ${plugin} ${err.message}`, data: { code: err.code } };
  if (err instanceof OnLoadFailedError) return { ok: false, content: `error: ${plugin} ${err.message}` };
  if (err instanceof PluginNameMismatchError) return { ok: false, content: `error: ${plugin} failed: ${err.message}`, data: { code: err.code } };
  return { ok: false, content: `error: ${plugin} failed: ${thrownMessage(err)}` };
}

/**
 * The reason onAbort gets when a hook failed the call, worded as the inline runtime words it: the
 * tool error without its `error: <tool> ` prefix (`failed: boom`), or without `error: ` where the
 * error begins with the hook's owner (`<tool>'s onPiece returned …`).
 */
export function abortReasonOf(plugin: string, content: string): string {
  const own = `error: ${plugin} `;
  return content.startsWith(own) ? content.slice(own.length) : content.replace(/^error: /, '');
}
