import type { TimingProfile } from '../../sim/sim-server.ts';

/**
 * Decode slow enough that a Python statement (a fork + exec, ~10 ms) finishes long before the
 * code block's last token, even on a loaded 2-core CI machine; fast enough for a quick suite.
 */
export const E2E_PROFILE: TimingProfile = {
  name: 'e2e',
  description: 'end-to-end tests',
  source: 'Synthetic: 6 ms per step, between fast-test and a real 7B model.',
  decode: { baseMs: 6, perSeqMs: 0.25 },
  prefill: { baseMs: 1, perTokenMs: 0.01 },
  maxNumSeqs: 16,
  maxModelLen: 32768,
};

export const SIM_MODEL = 'mistral-7b-instruct-sim';
