import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { z as zod3 } from 'zod/v3';
import { Dispatcher } from '../../../gateway/dispatcher.ts';
import { Timeline } from '../../../gateway/timeline.ts';
import { definePlugin, reject, type PluginDefinition } from '../../../plugins/kit/define-plugin.ts';
import { inlineTool, INLINE_DEFAULT_TIMEOUT_MS } from '../../../plugins/kit/inline-tool.ts';
import { loadPluginModule } from '../../../sandbox/runtimes/load-plugin-module.ts';
import { good } from './weather-definition.ts';


describe('definePlugin checks the whole definition, naming the field', () => {
  it('takes a good one as it is', () => {
    expect(definePlugin(good)).toBe(good);
  });

  it.each([
    [{ name: 'has space' }, /name "has space" must be 1-64 letters/],
    [{ runtime: 'proces' }, /runtime must be one of inline, thread, isolate, process, got "proces"/],
    [{ consumes: 'fields' }, /consumes must be one of line, field, step, call, got "fields"/],
    [{ parameters: { type: 'object', properties: {} } }, /parameters must be a zod schema/],
    [{ parameters: z.string() }, /parameters must be an object schema \(z.object\(\{\.\.\.\}\)\), got a string;/],
    [{ hooks: { onPiece: () => undefined } }, /hooks.onEnd must be a function/],
    [{ hooks: { ...good.hooks, onAbort: 'later' } }, /hooks.onAbort must be a function, got "later"/],
    [{ limits: { timeoutMs: -5 } }, /limits.timeoutMs must be a positive number, got -5/],
    // Node turns a longer setTimeout into 1 ms: every call "timed out after 3000000000 ms" at once.
    [{ limits: { timeoutMs: 3e9 } }, /limits.timeoutMs must be at most 2147483647 ms .*, got 3000000000/],
    [{ runtime: 'process', reuseProcess: 'yes' }, /reuseProcess must be true or false .*got "yes"/],
    // Only `process` starts a process per call: elsewhere the flag would promise what nothing does.
    [{ reuseProcess: true }, /reuseProcess is for runtime "process" .*got runtime "inline"/],
    [{ runtime: 'thread', reuseProcess: true }, /reuseProcess is for runtime "process" .*got runtime "thread"/],
  ])('refuses %j', (change, message) => {
    expect(() => definePlugin({ ...good, ...change } as never)).toThrow(message);
  });

  // A misspelt key used to load, and the plugin ran with the default: `runtimes: 'process'` inline,
  // outside the sandbox; `limits: { timeout }` with 30 s.
  it.each([
    [{ runtimes: 'process' }, "plugin weather: unknown key 'runtimes' (did you mean 'runtime'?)"],
    [{ sideEffect: true }, "plugin weather: unknown key 'sideEffect' (did you mean 'sideEffects'?)"],
    [{ limits: { timeout: 100 } }, "plugin weather: unknown key 'timeout' in limits (did you mean 'timeoutMs'?)"],
    [{ limits: { timeoutMs: 100, memoryMB: 64 } }, "plugin weather: unknown key 'memoryMB' in limits (did you mean 'memoryMb'?)"],
    [{ hooks: { ...good.hooks, piece: () => undefined } }, "plugin weather: unknown key 'piece' in hooks (did you mean 'onPiece'?)"],
    [{ hooks: { ...good.hooks, onpiece: () => undefined } }, "plugin weather: unknown key 'onpiece' in hooks (did you mean 'onPiece'?)"],
    [{ colour: 'red' }, "plugin weather: unknown key 'colour' (known: name, description, parameters, consumes, lineField, runtime, sideEffects, reuseProcess, limits, hooks)"],
  ])('refuses the unknown key of %j in one line, naming the key meant', (change, message) => {
    expect(() => definePlugin({ ...good, ...change } as never)).toThrow(new TypeError(message));
  });

  it('names the field that has no JSON Schema, and a zod 3 schema as such', () => {
    const hint = "parameters must be a zod 4 object schema (import { z } from 'zod') whose fields JSON Schema can describe";
    expect(() => definePlugin({ ...good, parameters: z.object({ city: z.string(), when: z.date() }) } as never)).toThrow(
      new TypeError(`plugin weather: parameters: field 'when' has no JSON Schema (Date cannot be represented in JSON Schema); ${hint}`),
    );
    expect(() => definePlugin({ ...good, parameters: zod3.object({ city: zod3.string() }) } as never)).toThrow(
      new TypeError(`plugin weather: parameters is not a zod 4 schema (a zod 3 one, from 'zod/v3' or zod < 4?); ${hint}`),
    );
  });
});

describe('a plugin module whose default export is not a plugin', () => {
  const module = (source: string) => `data:text/javascript,${encodeURIComponent(source)}`;

  it('says it has no default export, or what is wrong with the one it has', async () => {
    await expect(loadPluginModule(module('export const weather = 1;'))).rejects.toThrow(/has no default export; export default definePlugin/);
    const jsonSchema = `export default { name: 'w', description: 'd', parameters: { type: 'object' }, consumes: 'call', hooks: { onEnd: () => 'x' } };`;
    await expect(loadPluginModule(module(jsonSchema))).rejects.toThrow(/its default export is not a plugin: parameters must be a zod schema/);
  });
});

/** One inline call through the real Dispatcher, as the gateway runs it. */
function dispatch(definition: PluginDefinition) {
  const tool = inlineTool(definition);
  const rejects: string[] = [];
  const d = new Dispatcher({
    tools: new Map([[tool.name, tool]]),
    partialExecution: true,
    signal: new AbortController().signal,
    timeline: new Timeline('t'),
    round: 1,
    onProgress: () => {},
    onReject: (_call, reason) => rejects.push(reason),
  });
  return { d, rejects };
}

describe('inline plugins', () => {
  afterEach(() => vi.useRealTimers());

  it('time a hook that never settles as the other runtimes do: hook work while the call is written, then everything', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const aborted: string[] = [];
    const { d } = dispatch(
      definePlugin({
        ...good,
        limits: { timeoutMs: 1000 },
        hooks: {
          // 600 ms of work at the first field, then a hook that hangs at the second.
          onPiece: (piece) => new Promise<undefined>((resolve) => (piece.kind === 'field' && piece.value === 'Oslo' ? setTimeout(resolve, 600) : undefined)),
          onEnd: () => 'never',
          onAbort: (reason) => void aborted.push(reason),
        },
      }),
    );
    d.callStart('c1', 'weather');
    d.piece('c1', { kind: 'field', path: ['city'], value: 'Oslo' });
    await vi.advanceTimersByTimeAsync(600);
    // The model takes its time writing the next field: not the tool's time.
    await vi.advanceTimersByTimeAsync(60_000);
    d.piece('c1', { kind: 'field', path: ['country'], value: 'Norway' });
    await vi.advanceTimersByTimeAsync(399);
    expect(aborted).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(aborted).toEqual(['timed out after 1000 ms']);
    // The call is over, the request goes on: its end gets the timeout at once.
    d.callEnd('c1', { city: 'Oslo', country: 'Norway' });
    expect((await d.settle())[0]?.result).toEqual({
      ok: false,
      content: 'error: weather timed out after 1000 ms',
      data: { code: 'sandbox_limit_exceeded', runtime: 'inline' },
    });
  });

  it('stop waiting for an onStart that never settles', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { d } = dispatch(definePlugin({ ...good, limits: { timeoutMs: 500 }, hooks: { ...good.hooks, onStart: () => new Promise<void>(() => {}) } }));
    d.callStart('c1', 'weather');
    d.piece('c1', { kind: 'field', path: ['city'], value: 'Oslo' });
    d.callEnd('c1', { city: 'Oslo' });
    const settled = d.settle();
    await vi.advanceTimersByTimeAsync(500);
    expect((await settled)[0]?.result).toMatchObject({ ok: false, content: 'error: weather timed out after 500 ms' });
  });

  it('abort a rejected call: its signal and onAbort, even when onAbort throws', async () => {
    const seen: string[] = [];
    const { d, rejects } = dispatch(
      definePlugin({
        ...good,
        hooks: {
          onStart: (ctx) => ctx.signal.addEventListener('abort', () => seen.push(`signal ${String(ctx.signal.reason)}`)),
          onPiece: (piece) => (piece.kind === 'field' && piece.value === 'Austin' ? reject('which Austin? say the state') : undefined),
          onEnd: () => 'never',
          onAbort: (reason) => {
            seen.push(`onAbort ${reason}`);
            throw new Error('a bug in onAbort');
          },
        },
      }),
    );
    d.callStart('c1', 'weather');
    d.piece('c1', { kind: 'field', path: ['city'], value: 'Austin' });
    d.callEnd('c1', { city: 'Austin' });
    const [outcome] = await d.settle();
    expect(rejects).toEqual(['which Austin? say the state']);
    expect(seen).toEqual(['signal rejected: which Austin? say the state', 'onAbort rejected: which Austin? say the state']);
    expect(outcome?.result).toEqual({ ok: false, content: 'error: weather rejected the call: which Austin? say the state' });
  });

  it('turn a throwing onStart and a bad onEnd result into the call\'s tool error', async () => {
    const failing = dispatch(definePlugin({ ...good, hooks: { ...good.hooks, onStart: () => { throw new Error('no connection'); } } }));
    failing.d.callStart('c1', 'weather');
    failing.d.piece('c1', { kind: 'field', path: ['city'], value: 'Oslo' });
    failing.d.callEnd('c1', { city: 'Oslo' });
    expect((await failing.d.settle())[0]?.result).toEqual({ ok: false, content: 'error: weather failed: no connection' });

    const odd = dispatch(definePlugin({ ...good, hooks: { onEnd: () => 42 as never } }));
    odd.d.callStart('c1', 'weather');
    odd.d.callEnd('c1', { city: 'Oslo' });
    expect((await odd.d.settle())[0]?.result).toEqual({ ok: false, content: "error: weather's onEnd returned 42, not a string or { ok, content }" });
  });

  it('time out after 30 s when the definition sets no limit', async () => {
    vi.useFakeTimers();
    let aborted = '';
    const { d } = dispatch(definePlugin({ ...good, hooks: { onEnd: () => new Promise<string>(() => {}), onAbort: (reason) => void (aborted = reason) } }));
    d.callStart('c1', 'weather');
    d.callEnd('c1', { city: 'Oslo' });
    const settled = d.settle();
    await vi.advanceTimersByTimeAsync(INLINE_DEFAULT_TIMEOUT_MS);
    expect((await settled)[0]?.result).toEqual({
      ok: false,
      content: `error: weather timed out after ${INLINE_DEFAULT_TIMEOUT_MS} ms`,
      data: { code: 'sandbox_limit_exceeded', runtime: 'inline' },
    });
    expect(aborted).toBe(`timed out after ${INLINE_DEFAULT_TIMEOUT_MS} ms`);
  });
});
