import { Worker } from 'node:worker_threads';
import { SimConfigError } from '../core/errors.ts';
import type { SimCounters } from './engine-stats.ts';
import type { SimHandle, SimOptions } from './sim-server.ts';
import type { SimThreadData, SimThreadMessage } from './sim-thread-worker.ts';

/** Slots for the counters (SimCounters has fewer). */
const COUNTER_SLOTS = 64;

/**
 * startSim on a worker thread of its own: the embedded upstream of `npm start`, the tests and the
 * playground. In the gateway's thread, the simulator's work (tokenising a prompt of megabytes took
 * seconds) held every stream and every other request of the gateway; a real upstream is another
 * process, and so, nearly, is this. `counters()` reads a copy the worker refreshes every few
 * milliseconds: it may lag the engine by that much.
 */
export async function startSimThread(options: SimOptions = {}): Promise<SimHandle> {
  const counters = new SharedArrayBuffer(COUNTER_SLOTS * Float64Array.BYTES_PER_ELEMENT);
  const worker = new Worker(new URL('./sim-thread-entry.mjs', import.meta.url), { workerData: { options, counters } satisfies SimThreadData });
  const ready = await new Promise<Extract<SimThreadMessage, { t: 'ready' }>>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the simulator's thread exited (code ${code}) before it was ready`)));
    worker.once('message', (message: SimThreadMessage) => {
      if (message.t === 'ready') resolve(message);
      else if (message.t === 'failed') reject(message.error.name === 'SimConfigError' ? new SimConfigError(message.error.message) : new Error(message.error.message));
    });
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  worker.removeAllListeners();
  // A simulator that fails later ends its thread, not the gateway: its requests then fail as a
  // dead upstream's do. Without a listener, the thread's error would be thrown in this one.
  worker.on('error', () => undefined);
  let exited = false;
  const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve(void (exited = true))));
  // Not what keeps the process running: the gateway's server does, and close() ends the thread.
  worker.unref();
  const slots = new Float64Array(counters);
  let asked = false;
  return {
    url: ready.url,
    port: ready.port,
    counters: () => Object.fromEntries(ready.keys.map((key, i) => [key, slots[i]])) as unknown as SimCounters,
    close() {
      // A thread that already ended (its simulator failed) has nothing to close; asked once, it ends.
      if (!exited && !asked) {
        asked = true;
        // Held while it closes: a start-up that fails before the server listens awaits this with
        // nothing else keeping the process alive, and Node would end it (status 13) before the
        // error could be told.
        worker.ref();
        worker.once('message', () => void worker.terminate());
        worker.postMessage({ t: 'close' });
      }
      return ended;
    },
  };
}
