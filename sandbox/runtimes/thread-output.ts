import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';

/** What a thread plugin printed, as the pool hands it on (ProcessPoolOptions.onOutput's shape). */
export interface ThreadOutput {
  plugin: string;
  text: string;
}

/** A channel name of its own per pool: two pools in one process (tests) do not hear each other. */
export function threadOutputChannelName(): string {
  return `conveyor-thread-output-${randomUUID()}`;
}

/**
 * The pool's side: each write a worker's plugin makes to stdout or stderr, to `onOutput` (the
 * gateway logs it as a JSON line, as a process plugin's). Returns the function that stops listening.
 */
export function listenForThreadOutput(channelName: string, onOutput: (output: ThreadOutput) => void): () => void {
  const channel = new BroadcastChannel(channelName);
  channel.unref();
  channel.onmessage = (event) => {
    const { plugin, text } = (event as { data: ThreadOutput }).data;
    if (typeof plugin === 'string' && typeof text === 'string') onOutput({ plugin, text });
  };
  return () => channel.close();
}

/**
 * The worker's side: stdout and stderr go over the channel instead of to the gateway's own stdout,
 * where, as raw bytes between the log's JSON lines, a write without its newline glued itself to the
 * next access line. `plugin` names whose hook runs now.
 */
export function captureThreadOutput(channelName: string, plugin: () => string): void {
  const channel = new BroadcastChannel(channelName);
  channel.unref();
  for (const stream of [process.stdout, process.stderr]) {
    stream.write = ((chunk: string | Uint8Array, encoding?: BufferEncoding | ((err?: Error | null) => void), callback?: (err?: Error | null) => void): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? encoding : 'utf8');
      channel.postMessage({ plugin: plugin(), text } satisfies ThreadOutput);
      (typeof encoding === 'function' ? encoding : callback)?.(null);
      return true;
    }) as typeof stream.write;
  }
}
