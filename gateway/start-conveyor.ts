import { startSim, type SimHandle, type SimOptions } from '../sim/sim-server.ts';
import { createPythonPlugin } from '../plugins/python/python-plugin.ts';
import { startPythonSandbox, type PythonSandboxOptions } from '../sandbox/python-sandbox.ts';
import type { ToolPlugin } from '../plugins/plugin-types.ts';
import type { GatewayConfigInput } from './config.ts';
import { startGateway, type GatewayHandle } from './server.ts';

export interface ConveyorOptions {
  gateway?: Omit<Partial<GatewayConfigInput>, 'upstream'> & { upstream?: Partial<GatewayConfigInput['upstream']> };
  /** Options for the embedded simulator, used when no upstream baseUrl is given. */
  sim?: SimOptions;
  sandbox?: PythonSandboxOptions;
}

export interface ConveyorHandle {
  gateway: GatewayHandle;
  /** Present when the gateway runs on its embedded simulator. */
  sim?: SimHandle;
  sandbox: Awaited<ReturnType<typeof startPythonSandbox>>;
  close(): Promise<void>;
}

/**
 * Wires the whole product: Python sandbox → python plugin → gateway, in front of a real upstream or
 * the embedded simulator on loopback. Used by `npm start`, the end-to-end tests and the benchmarks.
 */
export async function startConveyor(options: ConveyorOptions = {}): Promise<ConveyorHandle> {
  const upstreamUrl = options.gateway?.upstream?.baseUrl;
  const sim = upstreamUrl ? undefined : await startSim(options.sim);
  const sandbox = await startPythonSandbox(options.sandbox);
  const tools = new Map<string, ToolPlugin>([['python', createPythonPlugin(sandbox)]]);
  try {
    const gateway = await startGateway(
      { ...options.gateway, upstream: { ...options.gateway?.upstream, baseUrl: upstreamUrl ?? sim!.url } },
      { tools, health: () => ({ sandbox: sandbox.protections(), ...(sim ? { simulator: sim.counters() } : {}) }) },
    );
    return {
      gateway,
      sim,
      sandbox,
      close: async () => {
        await gateway.close();
        await Promise.allSettled([sandbox.close(), sim?.close()]);
      },
    };
  } catch (err) {
    await Promise.allSettled([sandbox.close(), sim?.close()]);
    throw err;
  }
}
