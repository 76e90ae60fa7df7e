import { z } from 'zod';
import { thrownMessage } from '../../core/errors.ts';
import { definitionProblem, toolResultOf } from '../../plugins/kit/check-definition.ts';
import type { PluginContext, PluginDefinition } from '../../plugins/kit/define-plugin.ts';
import type { ToolResult } from '../../plugins/plugin-types.ts';
import { nativeTypeScript } from './node-recipe.ts';

const cache = new Map<string, Promise<PluginDefinition>>();

/**
 * Imports a plugin module (inside a worker or plugin process) and returns its default export,
 * which must be a `definePlugin(...)` result. Cached per URL for the life of the process.
 */
export function loadPluginModule(url: string): Promise<PluginDefinition> {
  let loading = cache.get(url);
  if (!loading) {
    loading = importModule(url).then((mod: { default?: unknown }) => asDefinition(mod.default, url));
    cache.set(url, loading);
  }
  return loading;
}

const ready = new Map<string, Promise<PluginDefinition>>();

/**
 * The plugin as the runtime that runs its calls (a worker, a plugin process) needs it: imported,
 * and its onLoad hook run once in this process or thread. A throwing onLoad fails every call.
 */
export function loadPluginForCalls(url: string): Promise<PluginDefinition> {
  let loading = ready.get(url);
  if (!loading) {
    loading = loadPluginModule(url).then(async (definition) => {
      await definition.hooks.onLoad?.();
      return definition;
    });
    ready.set(url, loading);
  }
  return loading;
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

function asDefinition(value: unknown, url: string): PluginDefinition {
  if (value === undefined) throw new TypeError(`${url} has no default export; export default definePlugin({...})`);
  const problem = definitionProblem(value);
  if (problem !== undefined) throw new TypeError(`${url}: its default export is not a plugin: ${problem}`);
  return value as PluginDefinition;
}

/** Validates the decoded arguments and runs onEnd; every failure becomes a tool error result. */
export async function runEndHook(definition: PluginDefinition, rawArgs: Record<string, unknown>, ctx: PluginContext): Promise<ToolResult> {
  const parsed = definition.parameters.safeParse(rawArgs);
  if (!parsed.success) return { ok: false, content: `error: ${definition.name} ${invalidArguments(parsed.error)}`, data: { code: 'invalid_arguments' } };
  try {
    return toolResultOf(definition.name, await definition.hooks.onEnd(parsed.data, ctx));
  } catch (err) {
    return hookFailure(definition.name, err);
  }
}

/** How every runtime words a call whose arguments fail the schema (after `error: <tool> `). */
export function invalidArguments(error: z.ZodError): string {
  return `got invalid arguments: ${z.prettifyError(error)}`;
}

/** A hook threw: the call's tool error, worded alike in every runtime. */
export function hookFailure(plugin: string, err: unknown): ToolResult {
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
