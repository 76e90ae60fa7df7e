import { z } from 'zod';
import type { Piece } from '../../parsers/parser-events.ts';
import type { ToolCallContext, ToolExecution, ToolPlugin, ToolResult, Verdict } from '../plugin-types.ts';
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

class InlineExecution implements ToolExecution {
  private readonly definition: PluginDefinition;
  private readonly ctx: PluginContext;
  private readonly started: Promise<void>;
  private aborted = false;

  constructor(definition: PluginDefinition, call: ToolCallContext) {
    this.definition = definition;
    this.ctx = { callId: call.callId, signal: call.signal, state: {}, emit: call.emit };
    // A failing pre-warm must not surface as an unhandled rejection; onEnd reports it.
    this.started = loadInline(definition).then(() => definition.hooks.onStart?.(this.ctx));
    this.started.catch(() => {});
    call.signal.addEventListener('abort', () => this.abort('request aborted'), { once: true });
  }

  async piece(piece: Piece): Promise<Verdict> {
    await this.started;
    const verdict = await this.definition.hooks.onPiece?.(piece, this.ctx);
    return verdict ?? undefined;
  }

  async end(rawArgs: Record<string, unknown>): Promise<ToolResult> {
    await this.started;
    const parsed = this.definition.parameters.safeParse(rawArgs);
    if (!parsed.success) return { ok: false, content: `error: invalid arguments for ${this.definition.name}: ${z.prettifyError(parsed.error)}` };
    const timeoutMs = this.definition.limits?.timeoutMs;
    const work = Promise.resolve(this.definition.hooks.onEnd(parsed.data, this.ctx)).then(normalize);
    if (!timeoutMs) return work;
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
    if (this.aborted) return;
    this.aborted = true;
    this.definition.hooks.onAbort?.(reason, this.ctx);
  }
}

function normalize(result: ToolResult | string): ToolResult {
  return typeof result === 'string' ? { ok: true, content: result } : result;
}
