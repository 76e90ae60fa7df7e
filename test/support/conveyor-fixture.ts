import { startConveyor, type ConveyorHandle, type ConveyorOptions } from '../../gateway/start-conveyor.ts';
import { E2E_PROFILE, SIM_MODEL } from './e2e-profile.ts';

export { E2E_PROFILE, SIM_MODEL };


/** The whole product on loopback: real gateway, real simulator, real Python sandbox. */
export function startTestConveyor(options: ConveyorOptions = {}): Promise<ConveyorHandle> {
  return startConveyor({
    ...options,
    gateway: { port: 0, ...options.gateway },
    sim: { profile: E2E_PROFILE, ...options.sim },
  });
}

export const SINE_STDLIB_REQUEST = {
  model: SIM_MODEL,
  scenario: 'sine-wave-stdlib',
  messages: [{ role: 'user', content: 'Plot a sine wave in Python using only the standard library.' }],
};

/** Polls until `check` returns true (the system under test settles asynchronously). */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
