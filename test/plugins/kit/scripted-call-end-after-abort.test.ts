import { afterAll, describe, expect, it } from 'vitest';
import type { Piece } from '../../../parsers/parser-events.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import abortReport, { abortLine } from '../../sandbox/runtimes/fixtures/abort-report-plugin.ts';
import { eventually } from '../../sandbox/runtimes/runtime-test-helpers.ts';

// runScriptedCall calls end() even when its signal has aborted the call (the gateway's Dispatcher
// does not: it answers an aborted call itself). Each runtime must take that end() as a no-op that
// answers the abort: no onEnd after onAbort, no second onAbort, no hang, and the next call whole.

const pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { sparesPerPlugin: 0, uidBase: 1_900_979_000 } });
const moduleUrl = new URL('../../sandbox/runtimes/fixtures/abort-report-plugin.ts', import.meta.url);

afterAll(async () => {
  await pools.close();
});

describe('runScriptedCall: end() after the signal aborted the call', () => {
  for (const runtime of ['inline', 'thread', 'process', 'isolate'] as const) {
    it(`answers "was aborted" and runs onAbort once, no onEnd (runtime ${runtime})`, async () => {
      const tool = toolFromPlugin({ ...abortReport, runtime }, { moduleUrl, pools });
      const request = new AbortController();
      // Aborted after the piece's verdict, before end(): runScriptedCall asks for the next piece
      // then, and this list aborts the request instead of giving one. onStart ran, so onAbort has
      // something to release. Had onEnd run (mode 'hang'), it would say so and never answer.
      function* pieces(): Generator<Piece> {
        yield { kind: 'field', path: ['mode'], value: 'x' };
        request.abort();
      }
      const run = runScriptedCall(tool, { callId: 'call_abort', pieces: pieces() as unknown as Piece[], args: { mode: 'hang' } }, request.signal);
      const done = await run;
      expect(done.result).toEqual({ ok: false, content: 'error: abort_report was aborted: request aborted', data: expect.objectContaining({ code: 'aborted' }) });
      expect((await runScriptedCall(tool, { args: { mode: 'next' } })).result).toMatchObject({ ok: true, content: 'done: next' });
      // onAbort's progress: at once inline, in `afterEnd` elsewhere (the call's result did not wait for it).
      const details = (): string[] => [...done.progress, ...done.afterEnd].map((p) => (p.type === 'unit-done' ? p.detail : p.text));
      expect(await eventually(() => details().length > 0)).toBe(true);
      expect(details()).toEqual([abortLine('request aborted')]);
    });
  }
});
