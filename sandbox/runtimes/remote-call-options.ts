import type { PluginDefinition } from '../../plugins/kit/define-plugin.ts';
import type { HookErrorLog } from './hook-throw.ts';
import type { RemoteLease } from './remote-lease.ts';

/** What one call of a plugin in another process (RemoteExecution) is given by the tool that starts it. */
export interface RemoteCallOptions {
  /** What the gateway side needs of the plugin (a command plugin has no hooks). */
  definition: Pick<PluginDefinition, 'name' | 'parameters'>;
  runtime: 'process' | 'isolate';
  /** Plugin module URL the child imports; absent for non-JS commands. */
  module?: string;
  /** Memory limit of each guest isolate (ctx.guest). */
  memoryMb?: number;
  timeoutMs: number;
  /**
   * How long the call may wait for its process (a free slot, a warm spare or a cold start on a busy
   * machine, and a JS plugin's onLoad, which runs before its process is ready): that wait is not
   * the plugin's time, so its own limit does not count it, but a pool that never gets to the call
   * must still end it. Default START_ALLOWANCE_MS plus the default onLoad limit.
   */
  startLimitMs?: number;
  /** `tenant`: the call's (ToolCallContext.tenant); a kept process serves only its own tenant's calls. */
  acquire(signal: AbortSignal, tenant: string | undefined): Promise<RemoteLease>;
  /** Extra data on every result (e.g. that an isolate plugin ran in the process fallback). */
  data?: Record<string, unknown>;
  /** A hook's throw as the child reports it, with its stack, for the gateway log (RuntimePoolsOptions.onHookError). */
  onHookError?: HookErrorLog;
}
