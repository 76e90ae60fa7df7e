import { describe, expect, it } from 'vitest';
import { startTestConveyor } from '../support/conveyor-fixture.ts';

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
});
