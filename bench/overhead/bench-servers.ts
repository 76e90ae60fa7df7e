import { fileURLToPath } from 'node:url';
import { spawnTarget, type ChildTarget } from './child-target.ts';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** The timing profile of the overhead benchmarks' simulator (see its `source`). */
export const OVERHEAD_PROFILE = here('./overhead-profile.json');
export const SIM_MODEL = 'mistral-7b-instruct-sim';

/** The simulator in its own process, with the overhead scenarios (bench/overhead/scenarios). */
export function spawnOverheadSim(): Promise<ChildTarget> {
  return spawnTarget({
    name: 'sim',
    args: ['--import', 'tsx', here('../../sim/cli.ts'), '--port', '0', '--profile', OVERHEAD_PROFILE, '--scenarios', here('./scenarios')],
    urlLine: /^(http:\/\/\S+\/v1)$/,
  });
}

/** Our gateway in its own process (gateway-entry.ts: the product as `npm start` wires it). */
export function spawnOurGateway(upstreamUrl: string): Promise<ChildTarget> {
  return spawnTarget({
    name: 'conveyor',
    args: ['--import', 'tsx', here('./gateway-entry.ts'), '--upstream', upstreamUrl],
    urlLine: /listening on (\S+\/v1)$/,
    ipc: true,
    timeoutMs: 60_000,
  });
}
