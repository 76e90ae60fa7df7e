import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { eventually, startTestConveyor } from '../support/conveyor-fixture.ts';

const JS_EVAL_PLUGIN = fileURLToPath(new URL('../../plugins/kit/examples/js-eval-plugin.ts', import.meta.url));
const FAULTY_PLUGIN = fileURLToPath(new URL('../sandbox/runtimes/fixtures/faulty-plugin.ts', import.meta.url));
const FAILING_START_PLUGIN = fileURLToPath(new URL('./fixtures/failing-start-command-plugin.ts', import.meta.url));

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

  it('checks the gateway settings before starting the simulator and the sandbox', async () => {
    // The sandbox would fail to start (no such interpreter): the settings' mistake is found first.
    await expect(startTestConveyor({ gateway: { maxQueuedRequests: 3 }, sandbox: { python: '/nonexistent/python3' } })).rejects.toThrow(
      /invalid gateway configuration: maxQueuedRequests/,
    );
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

  it('logs a warm spare plugin process that did not start, with the plugin and why', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (text: string) => lines.push(JSON.parse(text) as Record<string, unknown>) });
    const conveyor = await startTestConveyor({ plugins: { python: false }, toolModules: [FAILING_START_PLUGIN], logger });
    try {
      await eventually(() => lines.some((line) => line.msg === 'warm spare plugin process did not start'), 'the failed spare logged');
      const logged = lines.find((line) => line.msg === 'warm spare plugin process did not start')!;
      expect(logged).toMatchObject({ level: 40, plugin: 'never_starts', reason: 'the plugin process did not start: exited with code 3 (told to fail at start-up)' });
    } finally {
      await conveyor.close();
    }
  });

  it("logs what a sandboxed plugin process prints, with the plugin's name (its author's one way to see inside it)", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (text: string) => lines.push(JSON.parse(text) as Record<string, unknown>) });
    const conveyor = await startTestConveyor({ plugins: { python: false }, toolModules: [FAULTY_PLUGIN], logger });
    try {
      const tool = conveyor.gateway.tools.get('faulty')!;
      const { result } = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['mode'], value: 'print' }], args: { mode: 'print' } });
      expect(result).toMatchObject({ ok: true });
      await eventually(() => lines.some((line) => line.plugin === 'faulty' && line.output === 'debugging: got the mode field'), 'the plugin output logged');
    } finally {
      await conveyor.close();
    }
  });
});
