import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { PluginDefinition } from '../../../plugins/kit/define-plugin.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';

// toolFromPlugin took a definition as it came: one built by hand (a spread with a field changed, an
// object literal cast to PluginDefinition) skipped definePlugin's checks, so a name no upstream
// accepts, or a JSON Schema where the zod schema belongs, made a tool that failed later (upstream
// refused the request; every call's arguments check threw). The gateway's own paths (a module's
// default export) check it again; toolFromPlugin now does too, with the same check and words.

const pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { uidBase: 1_900_978_000 } });
const moduleUrl = new URL('../../sandbox/runtimes/fixtures/echo-plugin.ts', import.meta.url);

afterAll(async () => {
  await pools.close();
});

const valid = {
  name: 'hand_built',
  description: 'Answers "ok"',
  parameters: z.object({ text: z.string() }),
  consumes: 'call',
  hooks: { onEnd: () => 'ok' },
} as PluginDefinition;

describe('toolFromPlugin checks a definition not made by definePlugin', () => {
  it('takes a valid hand-built one', () => {
    expect(toolFromPlugin(valid).name).toBe('hand_built');
  });

  for (const runtime of ['inline', 'thread', 'process'] as const) {
    it(`refuses a name upstream would refuse (runtime ${runtime})`, () => {
      expect(() => toolFromPlugin({ ...valid, name: 'hand built', runtime }, { moduleUrl, pools })).toThrow(/^plugin hand built: name "hand built" must be /);
    });

    it(`refuses a JSON Schema where the zod schema belongs (runtime ${runtime})`, () => {
      const parameters = { type: 'object', properties: { text: { type: 'string' } } } as unknown as z.ZodType;
      expect(() => toolFromPlugin({ ...valid, parameters, runtime }, { moduleUrl, pools })).toThrow(/^plugin hand_built: parameters must be a zod schema/);
    });
  }

  it('refuses a runtime that does not exist, rather than running it elsewhere', () => {
    expect(() => toolFromPlugin({ ...valid, runtime: 'proces' as 'process' }, { moduleUrl, pools })).toThrow(/^plugin hand_built: runtime must be one of inline, thread, isolate, process, got "proces"/);
  });
});
