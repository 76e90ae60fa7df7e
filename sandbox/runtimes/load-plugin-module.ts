import { z } from 'zod';
import type { PluginContext, PluginDefinition } from '../../plugins/kit/define-plugin.ts';
import type { ToolResult } from '../../plugins/plugin-types.ts';

const cache = new Map<string, Promise<PluginDefinition>>();

/**
 * Imports a plugin module (inside a worker or plugin process) and returns its default export,
 * which must be a `definePlugin(...)` result. Cached per URL for the life of the process.
 */
export function loadPluginModule(url: string): Promise<PluginDefinition> {
  let loading = cache.get(url);
  if (!loading) {
    loading = import(url).then((mod: { default?: unknown }) => asDefinition(mod.default, url));
    cache.set(url, loading);
  }
  return loading;
}

function asDefinition(value: unknown, url: string): PluginDefinition {
  const candidate = value as Partial<PluginDefinition> | undefined;
  if (
    !candidate ||
    typeof candidate.name !== 'string' ||
    typeof candidate.hooks?.onEnd !== 'function' ||
    typeof (candidate.parameters as { safeParse?: unknown } | undefined)?.safeParse !== 'function'
  ) {
    throw new TypeError(`${url} has no default export made with definePlugin(...)`);
  }
  return candidate as PluginDefinition;
}

/** Validates the decoded arguments and runs onEnd; every failure becomes a tool error result. */
export async function runEndHook(definition: PluginDefinition, rawArgs: Record<string, unknown>, ctx: PluginContext): Promise<ToolResult> {
  const parsed = definition.parameters.safeParse(rawArgs);
  if (!parsed.success) return { ok: false, content: `error: invalid arguments for ${definition.name}: ${z.prettifyError(parsed.error)}` };
  try {
    const result = await definition.hooks.onEnd(parsed.data, ctx);
    return typeof result === 'string' ? { ok: true, content: result } : result;
  } catch (err) {
    return hookFailure(definition.name, err);
  }
}

export function hookFailure(plugin: string, err: unknown): ToolResult {
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return { ok: false, content: `error: ${plugin} failed: ${message}` };
}
