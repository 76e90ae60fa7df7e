import type { Duplex } from 'node:stream';
import { NdjsonLineSplitter } from '../python-ipc.ts';

/** Longest protocol line accepted; a child that sends more without a newline is killed. */
const MAX_LINE = 8 * 1024 * 1024;
/** Why such a child is killed: a result (or progress) that large, in words a tool author can act on. */
export const TOO_LONG = 'protocol error: a message over 8 MiB (a result or progress this large is more than the gateway takes from a plugin process: return less)';

/** What reads a plugin process's protocol channel (fd 3) tells the process it reads for. */
export interface ChannelReader {
  /**
   * Nothing it writes is heard any more: it was killed (a protocol error, the output limit, the
   * call over), or its start-up failed (timed out, aborted).
   */
  deaf(): boolean;
  /** Not `ready` yet: a chunk is read at once, not after the rest of this turn's I/O. */
  starting(): boolean;
  /** A line other than blank; true: the rest of its chunk is not heard (the process was failed for it). */
  line(line: string): boolean;
  /** The child sent more than MAX_LINE without a newline. */
  tooLong(why: string): void;
}

/**
 * Reads `channel` as NDJSON lines for `reader`, in order. Returns `drain`, which handles the
 * chunks read but not yet handled (an exit calls it, so a result read just before it is still heard).
 */
export function readChannel(channel: Duplex, reader: ChannelReader): () => void {
  const splitter = new NdjsonLineSplitter();
  let pending = 0;
  channel.setEncoding('utf8');
  channel.on('error', () => undefined);
  const onChannel = (chunk: string): void => {
    // Killed: what it wrote before the kill landed is no longer heard, or a well-formed result
    // behind a bad line would still end its call, and a line too long would keep growing here. The
    // same for a start-up that failed: a `ready` it had sent, read before its exit, handed out a
    // process already being killed.
    if (reader.deaf()) return;
    const nl = chunk.lastIndexOf('\n');
    pending = nl < 0 ? pending + chunk.length : chunk.length - nl - 1;
    if (pending > MAX_LINE) return reader.tooLong(TOO_LONG);
    for (const line of splitter.push(chunk)) {
      if (line.trim() && reader.line(line)) return;
    }
  };
  // Handled once the rest of this turn's I/O is: the child's output reaches its pipes before
  // its result (plugin-host.ts), but both can be read in one turn, and output read after the
  // result went to the next call of a kept process, or pushed the call that printed it past the
  // output limit only once that call had ended `ok`. FIFO, so the messages keep their order.
  const queued: string[] = [];
  let scheduled = false;
  const drain = (): void => {
    scheduled = false;
    for (let chunk = queued.shift(); chunk !== undefined; chunk = queued.shift()) onChannel(chunk);
  };
  channel.on('data', (chunk: string) => {
    // `ready` at once: deferred, output read in the same turn would find no process yet, and a
    // child that floods right after it would fail its start-up rather than its call.
    if (reader.starting() && queued.length === 0) return onChannel(chunk);
    queued.push(chunk);
    if (!scheduled) {
      scheduled = true;
      setImmediate(drain);
    }
  });
  return drain;
}
