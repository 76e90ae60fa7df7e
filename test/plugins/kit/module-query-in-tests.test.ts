import { afterAll, describe, expect, it } from 'vitest';
import { createRuntimePools, runScriptedCall, toolFromPlugin } from '../../../plugins/kit/index.ts';
import { createGreetPlugin } from './fixtures/query-greet-plugin.ts';

// plugins/README.md, Testing: a module that reads its query sees none when a vitest test imports it
// (vite leaves the query out of import.meta.url), so the definition came out as the module's default,
// silently: a test of `?runtime=process` ran its hooks inline. The guide says to build the definition
// from the module's factory instead; the query in moduleUrl still reaches the workers and processes.

const pools = createRuntimePools({ process: { uidBase: 1_900_580_000 } });
afterAll(() => pools.close());

const moduleUrl = (query: string): URL => new URL(`./fixtures/query-greet-plugin.ts?${query}`, import.meta.url);

describe('a plugin module that reads its URL query, tested', () => {
  it('imported with a query in a test, is the module\'s default (the trap the guide warns of)', async () => {
    const imported = (await import(moduleUrl('greeting=hi&runtime=process').href)).default;
    expect(imported.name).toBe('greet_hello');
    expect(imported.runtime).toBe('inline');
  });

  it.each(['inline', 'thread', 'process'])('made from its factory with the query moduleUrl carries, runs in %s', async (runtime) => {
    const query = `greeting=hi&runtime=${runtime}`;
    const tool = toolFromPlugin(createGreetPlugin(new URLSearchParams(query)), { moduleUrl: moduleUrl(query), pools });
    const run = await runScriptedCall(tool, { args: { who: 'Ada' } });
    expect(run.result).toEqual({ ok: true, content: `hi, Ada (${runtime})` });
  });
});
