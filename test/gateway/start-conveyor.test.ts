import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startTestConveyor } from '../support/conveyor-fixture.ts';

const JS_EVAL_PLUGIN = fileURLToPath(new URL('../../plugins/kit/examples/js-eval-plugin.ts', import.meta.url));

describe('startConveyor', () => {
  it('starts no Python sandbox when the python tool is off, so a machine without a usable interpreter still serves', async () => {
    const conveyor = await startTestConveyor({ plugins: { python: false }, sandbox: { python: '/nonexistent/python3' } });
    try {
      expect(conveyor.sandbox).toBeUndefined();
      expect(conveyor.gateway.tools.has('python')).toBe(false);
      expect(conveyor.gateway.tools.has('calculator')).toBe(true);
      const health = (await (await fetch(`${conveyor.gateway.url}/health`)).json()) as { sandbox: { mode: string } };
      expect(health.sandbox.mode).toBe('off');
    } finally {
      await conveyor.close();
    }
  });

  it('refuses to start with the python tool on and no interpreter, naming what failed', async () => {
    await expect(startTestConveyor({ sandbox: { python: '/nonexistent/python3' } })).rejects.toThrow(/nonexistent/);
  });

  it("lists a tool module's plugin in /health where it runs: an isolate plugin in process where isolated-vm is unavailable", async () => {
    const conveyor = await startTestConveyor({ plugins: { python: false }, toolModules: [JS_EVAL_PLUGIN] });
    try {
      const health = (await (await fetch(`${conveyor.gateway.url}/health`)).json()) as {
        runtimes: { isolate: { available: boolean; reason?: string } };
        plugins: Record<string, Record<string, unknown>>;
      };
      const { isolate } = health.runtimes;
      expect(health.plugins.js_eval).toEqual(
        isolate.available
          ? { runtime: 'isolate', module: JS_EVAL_PLUGIN }
          : { runtime: 'process', requestedRuntime: 'isolate', fallbackReason: isolate.reason, module: JS_EVAL_PLUGIN },
      );
    } finally {
      await conveyor.close();
    }
  });
});
