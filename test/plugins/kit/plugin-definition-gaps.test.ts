import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import weather from '../../../plugins/kit/examples/location-check-plugin.ts';
import { definePlugin, inlineTool, runScriptedCall, type Piece, type PluginContext } from '../../../plugins/kit/index.ts';
import { definitionProblem } from '../../../plugins/kit/check-definition.ts';
import { good } from './weather-definition.ts';

// What a first-time tool author's walkthrough found accepted without a word, or refused in words
// that did not say what to write instead.
const refused = (change: object) => () => definePlugin({ ...good, ...change } as never);

describe('definePlugin refuses what would be silently ignored', () => {
  it('lineField on a plugin that is not fed lines', () => {
    expect(refused({ lineField: 'city' })).toThrow(
      new TypeError('plugin weather: lineField is for consumes "line" only (the string argument whose lines are the pieces), got consumes "field"'),
    );
  });

  // Regression (review 8, finding 7): it loaded, and the reject it meant to give never came.
  it('an onPiece on a plugin that consumes the whole call', () => {
    expect(refused({ consumes: 'call', hooks: { ...good.hooks, onPiece: () => undefined } })).toThrow(
      new TypeError(`plugin weather: hooks.onPiece is never called for consumes "call" (onEnd gets the whole call at once); to see the call as the model writes it, consume 'field', 'line' or 'step'`),
    );
    expect(() => definePlugin({ ...good, consumes: 'call', hooks: { onEnd: good.hooks.onEnd } })).not.toThrow();
  });

  // Review 8: `export default [definePlugin(…)]` read "unknown key '0'".
  it('an array of definitions as the default export', () => {
    expect(definitionProblem([definePlugin(good)])).toMatch(/^expected the object definePlugin\(\.\.\.\) returns, got an array: a module exports one plugin as its default; .*\?name=a/);
  });

  it('an empty description (the model chooses tools by it)', () => {
    for (const description of ['', '  \n']) {
      expect(refused({ description })).toThrow(
        new TypeError(`plugin weather: description is empty: say what the tool does and when to call it (the model reads only this and the parameters' descriptions)`),
      );
    }
  });

  it('a sideEffects that is not a boolean', () => {
    expect(refused({ sideEffects: 'yes' })).toThrow(new TypeError('plugin weather: sideEffects must be true or false (true when onEnd changes the world), got "yes"'));
    expect(definePlugin({ ...good, sideEffects: false }).sideEffects).toBe(false);
  });

  it.each([
    [{ runtime: 'thread', limits: { memoryMb: 128 } }, `limits.memoryMb is ignored by runtime "thread", which honours only timeoutMs (its workers share the pool's heap limit, createRuntimePools({ thread: { maxOldGenerationSizeMb } })); it applies in runtime "isolate" or "process"`],
    [{ runtime: 'thread', limits: { timeoutMs: 100, cpuSeconds: 1 } }, 'limits.cpuSeconds is ignored by runtime "thread", which honours only timeoutMs; it applies in runtime "process"'],
    [{ runtime: 'inline', limits: { fileSizeMb: 4 } }, 'limits.fileSizeMb is ignored by runtime "inline", which honours only timeoutMs; it applies in runtime "process"'],
    [{ runtime: 'isolate', limits: { memoryMb: 32, cpuSeconds: 1 } }, 'limits.cpuSeconds is ignored by runtime "isolate", which honours only timeoutMs, memoryMb; it applies in runtime "process"'],
    [{ runtime: 'isolate', limits: { maxProcesses: 4 } }, 'limits.maxProcesses is ignored by runtime "isolate", which honours only timeoutMs, memoryMb; it applies in runtime "process"'],
    // No runtime named: the default inline would ignore it, most likely a forgotten runtime: 'process'.
    [{ limits: { memoryMb: 128 } }, 'limits.memoryMb is ignored by runtime "inline" (the default: the plugin names no runtime), which honours only timeoutMs; it applies in runtime "isolate" or "process"'],
  ])('a limit the runtime ignores: %j', (change, message) => {
    expect(refused(change)).toThrow(new TypeError(`plugin weather: ${message}`));
  });

  it('takes the limits each runtime honours', () => {
    expect(() => definePlugin({ ...good, limits: { timeoutMs: 100 } })).not.toThrow();
    expect(() => definePlugin({ ...good, runtime: 'thread', limits: { timeoutMs: 100 } })).not.toThrow();
    expect(() => definePlugin({ ...good, runtime: 'isolate', limits: { timeoutMs: 100, memoryMb: 32 } })).not.toThrow();
    const all = { timeoutMs: 100, memoryMb: 64, cpuSeconds: 1, fileSizeMb: 4, maxProcesses: 8 };
    expect(() => definePlugin({ ...good, runtime: 'process', limits: all })).not.toThrow();
  });
});

describe('a parameters schema that is not an object says what it is', () => {
  const required = 'parameters must be an object schema (z.object({...})), got';
  it.each([
    [z.union([z.object({ city: z.string() }), z.object({ zip: z.string() })]), `${required} a union; a tool's arguments are named fields (for alternative sets of arguments, one z.object whose fields are optional, or a union inside a field)`],
    [z.discriminatedUnion('by', [z.object({ by: z.literal('city') }), z.object({ by: z.literal('zip') })]), `${required} a discriminated union; a tool's arguments are named fields (for alternative sets of arguments, one z.object whose fields are optional, or a union inside a field)`],
    [z.array(z.string()), `${required} an array; a tool's arguments are named fields`],
    [z.string().optional(), `${required} a string; a tool's arguments are named fields`],
    [z.any(), `${required} z.any(); a tool's arguments are named fields`],
  ])('%#', (parameters, message) => {
    expect(refused({ parameters })).toThrow(new TypeError(`plugin weather: ${message}`));
  });
});

describe('Piece, from the public API', () => {
  it('types an onPiece written apart from definePlugin', async () => {
    const seen: Array<Array<string | number>> = [];
    // Only the top-level `city` field: a field piece also comes for every nested leaf and closed container.
    const onPiece = (piece: Piece, _ctx: PluginContext): undefined => {
      if (piece.kind === 'field' && piece.path.length === 1 && piece.path[0] === 'city') seen.push(piece.path);
      return undefined;
    };
    const tool = inlineTool(definePlugin({ ...good, hooks: { ...good.hooks, onPiece } }));
    const field = (path: Array<string | number>, value: unknown): Piece => ({ kind: 'field', path, value });
    await runScriptedCall(tool, { pieces: [field(['city', 'parts', 0], 'Oslo'), field(['city', 'parts'], ['Oslo']), field(['city'], 'Oslo')], args: { city: 'Oslo' } });
    expect(seen).toEqual([['city']]);
  });

  it('the location-check example rejects at the top-level location only, not a nested path under it', async () => {
    const tool = inlineTool(weather);
    const nested = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['location', 'city'], value: 'Paris' }], args: { location: 'Austin, TX' } });
    expect(nested.rejected).toBeUndefined();
    const top = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['location'], value: 'Paris' }], args: { location: 'Paris' } });
    expect(top.rejected).toBe('location must look like "City, ST", got "Paris"');
  });
});

describe('definePlugin refuses a limit the sandbox cannot apply', () => {
  // The regression: `cpuSeconds: 1.5` (or maxProcesses, fileSizeMb: 0.3) passed as "a positive
  // number", and every call then failed with `the plugin process did not start: exited with code 1
  // (TypeError: 'float' object cannot be interpreted as an integer)`, the rlimit launcher's words;
  // `memoryMb: 100.5` with `illegal value for flag --max-old-space-size=100.5`.
  it.each([
    ['cpuSeconds', 1.5],
    ['maxProcesses', 2.5],
    ['fileSizeMb', 0.3],
    ['memoryMb', 100.5],
  ])('a fractional limits.%s, naming it', (limit, value) => {
    expect(refused({ runtime: 'process', limits: { [limit]: value } })).toThrow(
      new TypeError(`plugin weather: limits.${limit} must be a whole number, at least 1 (the sandbox sets it as an rlimit or a heap size), got ${value}`),
    );
  });

  it('a whole limit, and a fractional timeoutMs (a timer takes one)', () => {
    expect(() => definePlugin({ ...good, runtime: 'process', limits: { cpuSeconds: 2, maxProcesses: 3, fileSizeMb: 1, memoryMb: 128, timeoutMs: 1500.5 } })).not.toThrow();
  });
});

describe('definePlugin says what is wrong with a parameters schema wrapped in .nullable()', () => {
  // The regression: it read "parameters must be an object schema (z.object({...})), got an object",
  // which contradicts itself: the wrapper, not the object, is what is refused.
  it('names the wrapper', () => {
    expect(refused({ parameters: z.object({ city: z.string() }).nullable() })).toThrow(
      new TypeError("plugin weather: parameters must be an object schema (z.object({...})), got a nullable object (z.object({...}).nullable()); a tool's arguments are always one object: leave out .nullable()"),
    );
    expect(refused({ parameters: z.object({ city: z.string() }).nullable().optional() })).toThrow(/got a nullable object .*leave out \.nullable\(\)$/);
  });
});
