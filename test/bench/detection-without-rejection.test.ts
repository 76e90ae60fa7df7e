import { describe, expect, it } from 'vitest';
import { runAb } from '../../bench/run-ab.ts';
import type { Workload } from '../../bench/workloads/workload.ts';
import { fastSimGateway } from '../support/fast-sim-gateway.ts';

// With a real model (bench --upstream), the validation workload measures something only when the
// model writes the invalid call; one that writes a valid one (or none) failed the workload with
// '2 runs have no rejection in their timeline', which did not say what the user could change.
describe('a detection workload whose model wrote no invalid call', () => {
  const stand = fastSimGateway();
  it('fails saying how many runs of each mode had no rejection, and what the workload needs', async () => {
    const workload: Workload = {
      name: 'validation',
      description: 'a detection workload whose model answers in prose',
      request: () => ({ model: 'mistral-7b-instruct-sim', messages: [{ role: 'user', content: 'Hello there.' }], max_tokens: 8 }),
      detection: () => undefined,
    };
    await expect(runAb({ gatewayUrl: stand.gateway.url, workload, env: { numpy: false, simulator: true }, runs: 1, warmup: 0 })).rejects.toThrow(
      'validation: no call was rejected in 1 of 1 on runs and 1 of 1 off runs: the figure is the time to reject an invalid call, so the model must write one (bench/README.md, "Against a real vLLM")',
    );
  }, 60_000);
});
