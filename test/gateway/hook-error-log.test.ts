import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { hookErrorLog } from '../../gateway/hook-error-log.ts';

describe('hookErrorLog', () => {
  it('logs each throw at warn with its stack, and a failed onLoad once, not once per call that meets it', () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) });
    const log = hookErrorLog(pino({ level: 'info' }, sink));
    const onLoad = { plugin: 'weather', hook: 'onLoad' as const, runtime: 'thread' as const, stack: 'Error: no key\n    at weather.ts:3:9' };
    for (let call = 1; call <= 5; call++) log({ ...onLoad, callId: `call_${call}` });
    log({ ...onLoad, runtime: 'process', callId: 'call_6' });
    log({ plugin: 'weather', hook: 'onEnd', runtime: 'thread', callId: 'call_7', stack: 'Error: down\n    at weather.ts:9:3' });
    log({ plugin: 'weather', hook: 'onEnd', runtime: 'thread', callId: 'call_8', stack: 'Error: down\n    at weather.ts:9:3' });
    expect(lines.map((l) => [l.level, l.msg, l.runtime, l.callId])).toEqual([
      [40, "weather's onLoad threw", 'thread', 'call_1'],
      // Another runtime's onLoad is another load.
      [40, "weather's onLoad threw", 'process', 'call_6'],
      // Each call's own throw is its own.
      [40, "weather's onEnd threw", 'thread', 'call_7'],
      [40, "weather's onEnd threw", 'thread', 'call_8'],
    ]);
    expect(lines[0]?.stack).toBe(onLoad.stack);
  });
});
