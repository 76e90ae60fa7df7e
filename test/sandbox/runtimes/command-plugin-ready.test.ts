import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { RemoteExecution, type RemoteLease } from '../../../sandbox/runtimes/remote-execution.ts';

// A plugin in another language whose program never says `ready` (Python writing to a file object
// on fd 3 without flushing it: the protocol's first message never leaves) held each call for the
// whole start limit, 60 s, and then told its author "found no process to run it", which points at
// the pool's size rather than at the program. Its calls now say what the program owes.

/** A process that never comes: the acquire of a call whose program never says `ready`. */
const neverReady = (signal: AbortSignal): Promise<RemoteLease> =>
  new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));

function call(module?: string): RemoteExecution {
  return new RemoteExecution(
    { callId: 'call_1', signal: new AbortController().signal, emit: () => undefined },
    {
      definition: { name: 'lines_py', parameters: z.object({ text: z.string() }) },
      runtime: 'process',
      ...(module ? { module } : {}),
      timeoutMs: 10_000,
      startLimitMs: 50,
      acquire: neverReady,
    },
  );
}

describe('a call that gets no process within its start limit', () => {
  it('names the ready message a command plugin must send first, and how', async () => {
    const result = await call().end({ text: 'x' });
    expect(result).toMatchObject({ ok: false, data: { code: 'sandbox_limit_exceeded', limit: 'timeout' } });
    expect(result.content).toMatch(/^error: lines_py found no process to run it within 50 ms: its program has not sent its ready message/);
    expect(result.content).toContain('{"t":"ready"');
    expect(result.content).toContain('flushes each message');
  });

  it('keeps to the pool for a JS plugin, whose host always says ready', async () => {
    const result = await call('file:///plugins/lines-plugin.ts').end({ text: 'x' });
    expect(result.content).toBe('error: lines_py found no process to run it within 50 ms');
  });
});
