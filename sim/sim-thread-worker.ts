import { parentPort, workerData } from 'node:worker_threads';
import { startSim, type SimOptions } from './sim-server.ts';

/** How often the worker copies its counters where the gateway's thread reads them. */
const COUNTERS_EVERY_MS = 5;

export interface SimThreadData {
  options: SimOptions;
  /** Float64 slots for the counters, in the order the ready message names them. */
  counters: SharedArrayBuffer;
}

export type SimThreadMessage = { t: 'ready'; url: string; port: number; keys: string[] } | { t: 'failed'; error: { name: string; message: string } } | { t: 'closed' };

/** The worker's side: the simulator, its counters copied into shared memory, closed when asked. */
export async function runSimThread(): Promise<void> {
  const { options, counters } = workerData as SimThreadData;
  const port = parentPort!;
  let sim;
  try {
    sim = await startSim(options);
  } catch (err) {
    const error = err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) };
    port.postMessage({ t: 'failed', error } satisfies SimThreadMessage);
    return;
  }
  const keys = Object.keys(sim.counters());
  const slots = new Float64Array(counters);
  const copy = (): void => {
    const now = sim.counters() as unknown as Record<string, number>;
    keys.forEach((key, i) => (slots[i] = now[key]!));
  };
  copy();
  const timer = setInterval(copy, COUNTERS_EVERY_MS);
  port.on('message', (message: { t: string }) => {
    if (message.t !== 'close') return;
    clearInterval(timer);
    void sim.close().finally(() => {
      copy();
      port.postMessage({ t: 'closed' } satisfies SimThreadMessage);
      port.close();
    });
  });
  port.postMessage({ t: 'ready', url: sim.url, port: sim.port, keys } satisfies SimThreadMessage);
}
