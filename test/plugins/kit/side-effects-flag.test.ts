import { afterAll, describe, expect, it } from 'vitest';
import calculator from '../../../plugins/calculator/calculator-plugin.ts';
import outbox from '../../../plugins/kit/examples/outbox-plugin.ts';
import { inlineTool } from '../../../plugins/kit/inline-tool.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';

// Making a process tool starts nothing (a process starts with the first call); the pools are closed anyway.
const pools = createRuntimePools();
afterAll(() => pools.close());

describe('a sideEffects plugin tells the gateway so', () => {
  it('carries definePlugin\'s sideEffects onto the tool the Dispatcher runs, in every runtime', () => {
    expect(inlineTool(outbox).sideEffects).toBe(true);
    expect(toolFromPlugin(outbox).sideEffects).toBe(true);
    const moduleUrl = new URL('../../../plugins/calculator/calculator-plugin.ts', import.meta.url);
    expect(toolFromPlugin(calculator, { moduleUrl, pools })).toMatchObject({ runtime: 'process', sideEffects: false });
    expect(inlineTool(calculator).sideEffects).toBe(false);
  });
});
