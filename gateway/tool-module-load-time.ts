import { ConveyorError } from '../core/errors.ts';

/**
 * How long a tool module's import may take by default: its top-level code, a top-level await
 * included (config file `toolModuleLoadSeconds`). Long enough for a module that opens an index or
 * warms a cache as it loads; a start-up that waits longer on a plugin is one nobody would wait for.
 */
export const DEFAULT_TOOL_MODULE_LOAD_MS = 30_000;

/** A tool module's import did not settle in time (a top-level await that never does): the start stops, naming the module. */
export class ToolModuleLoadTimeoutError extends ConveyorError {
  readonly module: string;
  constructor(module: string, ms: number) {
    super('tool_module_load_timeout', `tool module ${module}: it did not finish loading within ${ms / 1000} s (a top-level await that never settles?)`);
    this.module = module;
  }
}

/**
 * `loading`, or a ToolModuleLoadTimeoutError once `ms` have passed. The timer is also what keeps
 * Node running meanwhile: an import whose top-level await never settles leaves nothing on the event
 * loop, and Node would end the process with status 13 (an unsettled top-level await, the CLI's own
 * `await`) without a word.
 */
export function withinLoadTime<T>(loading: Promise<T>, module: string, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ToolModuleLoadTimeoutError(module, ms)), ms);
  });
  return Promise.race([loading, late]).finally(() => clearTimeout(timer));
}
