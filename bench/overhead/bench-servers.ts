import { fileURLToPath } from 'node:url';
import { spawnTarget, type ChildTarget } from './child-target.ts';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** The timing profile of the overhead benchmarks' simulator (see its `source`). */
export const OVERHEAD_PROFILE = here('./overhead-profile.json');
export const SIM_MODEL = 'mistral-7b-instruct-sim';

/**
 * The simulator in its own process, with the overhead scenarios (bench/overhead/scenarios), on
 * `profile` (a shipped profile's name or a JSON file; default OVERHEAD_PROFILE).
 */
export function spawnOverheadSim(profile: string = OVERHEAD_PROFILE): Promise<ChildTarget> {
  return spawnTarget({
    name: 'sim',
    args: ['--import', 'tsx', here('../../sim/cli.ts'), '--port', '0', '--exit-with-stdin', '--profile', profile, '--scenarios', here('./scenarios')],
    urlLine: /^(http:\/\/\S+\/v1)$/,
  });
}

/**
 * Our gateway in its own process (gateway-entry.ts: the product as `npm start` wires it); from
 * `root`, another checkout of this repository (`--baseline`), if given.
 */
export function spawnOurGateway(upstreamUrl: string, root?: string): Promise<ChildTarget> {
  const entry = root === undefined ? here('./gateway-entry.ts') : `${root}/bench/overhead/gateway-entry.ts`;
  return spawnTarget({
    name: root === undefined ? 'conveyor' : `conveyor (${root})`,
    args: ['--import', 'tsx', entry, '--upstream', upstreamUrl],
    urlLine: /listening on (\S+\/v1)$/,
    ipc: true,
    timeoutMs: 60_000,
  });
}

/**
 * A simulator and our gateway in front of it, started by a caller who also closes them:
 * runOverhead and runParserCpu then start neither (their `profile` names the one the simulator was
 * started on). The overhead tests share one pair across their runs, a gateway's start-up being
 * most of a quick run's time.
 */
export interface StartedPair {
  sim: ChildTarget;
  conveyor: ChildTarget;
}
