import type { Piece } from '../../parsers/parser-events.ts';
import type { ToolCallContext, ToolExecution, ToolPlugin, ToolResult, Verdict } from '../plugin-types.ts';
import { hookFailure, runEndHook } from '../../sandbox/runtimes/load-plugin-module.ts';
import { lineFieldOf } from './check-definition.ts';
import { parametersJsonSchema, type PluginContext, type PluginDefinition } from './define-plugin.ts';

/**
 * Runs a plugin's hooks in the gateway's own event loop (runtime `inline`). The other runtimes
 * wrap the same hooks behind a worker, isolate or process boundary.
 */
export function inlineTool(definition: PluginDefinition): ToolPlugin {
  void loadInline(definition).catch(() => {});
  return {
    name: definition.name,
    description: definition.description,
    parameters: parametersJsonSchema(definition),
    consumes: definition.consumes,
    lineField: lineFieldOf(definition),
    start: (ctx) => new InlineExecution(definition, ctx),
  };
}

const loaded = new WeakMap<PluginDefinition, Promise<void>>();
const NOTHING_TO_LOAD = Promise.resolve();

/** The plugin's onLoad, once per definition in the gateway's process; its calls start after it. */
function loadInline(definition: PluginDefinition): Promise<void> {
  if (!definition.hooks.onLoad) return NOTHING_TO_LOAD;
  let loading = loaded.get(definition);
  if (!loading) {
    loading = Promise.resolve().then(() => definition.hooks.onLoad?.());
    loaded.set(definition, loading);
  }
  return loading;
}

/** onEnd's time limit when the definition sets none: the other runtimes' default. */
export const INLINE_DEFAULT_TIMEOUT_MS = 30_000;

class InlineExecution implements ToolExecution {
  private readonly definition: PluginDefinition;
  private readonly ctx: PluginContext;
  private readonly started: Promise<void>;
  /** The call's own signal: the request's, and aborted too when this call is (rejected, timed out). */
  private readonly controller = new AbortController();

  constructor(definition: PluginDefinition, call: ToolCallContext) {
    this.definition = definition;
    this.ctx = { callId: call.callId, signal: this.controller.signal, state: {}, emit: call.emit };
    // A failing pre-warm must not surface as an unhandled rejection; the call's hooks report it.
    this.started = loadInline(definition).then(() => definition.hooks.onStart?.(this.ctx));
    this.started.catch(() => {});
    if (call.signal.aborted) queueMicrotask(() => this.abort('request aborted'));
    else call.signal.addEventListener('abort', () => this.abort('request aborted'), { once: true });
  }

  async piece(piece: Piece): Promise<Verdict> {
    await this.started;
    const verdict = await this.definition.hooks.onPiece?.(piece, this.ctx);
    return verdict ?? undefined;
  }

  async end(rawArgs: Record<string, unknown>): Promise<ToolResult> {
    try {
      await this.started;
    } catch (err) {
      return hookFailure(this.definition.name, err);
    }
    const timeoutMs = this.definition.limits?.timeoutMs ?? INLINE_DEFAULT_TIMEOUT_MS;
    const work = runEndHook(this.definition, rawArgs, this.ctx);
    if (timeoutMs === 0) return work;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<ToolResult>((resolve) => {
      timer = setTimeout(() => {
        this.abort(`timed out after ${timeoutMs} ms`);
        resolve({ ok: false, content: `error: ${this.definition.name} timed out after ${timeoutMs} ms` });
      }, timeoutMs);
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }

  abort(reason: string): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(reason);
    // Called from the request's abort listener and the dispatcher's reject path: a throwing
    // onAbort is the plugin's bug and must not become an uncaught exception in the gateway.
    try {
      const cleanup: unknown = this.definition.hooks.onAbort?.(reason, this.ctx);
      if (cleanup instanceof Promise) cleanup.catch(() => {});
    } catch {
      // Nothing to tell: the call is over either way.
    }
  }
}
