import { OUT_OF_MEMORY } from './process-exit.ts';

const STDERR_TAIL = 4096;

/**
 * What a plugin process prints on stdout and stderr, as its handle keeps it: the bytes counted
 * against the output limit, and the tail and out-of-memory line an exit is read from.
 */
export class ProcessOutput {
  tail = '';
  bytes = 0;
  outOfMemory = false;
  private readonly onOutput: ((text: string) => void) | undefined;

  constructor(onOutput: ((text: string) => void) | undefined) {
    this.onOutput = onOutput;
  }

  /** Takes one read; returns the bytes counted so far. */
  collect(chunk: Buffer): number {
    this.bytes += chunk.length;
    const text = chunk.toString('utf8');
    const joined = this.tail + text;
    // Tested on the tail and this read together, so a line split across two reads is seen.
    this.outOfMemory ||= OUT_OF_MEMORY.test(joined);
    this.tail = joined.slice(-STDERR_TAIL);
    this.onOutput?.(text);
    return this.bytes;
  }

  /** Counts afresh, for a kept process's next call (PluginProcess.nextCall). */
  nextCall(): void {
    this.bytes = 0;
    this.tail = '';
    this.outOfMemory = false;
  }
}
