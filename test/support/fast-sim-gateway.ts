import { afterAll, beforeAll } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { E2E_PROFILE } from './e2e-profile.ts';

/**
 * A simulator that decodes fast (2 ms a step) and a gateway with no tools in front of it, started
 * before the suite's tests and closed after them. Call it at describe level; read `sim` and
 * `gateway` inside the tests.
 */
export function fastSimGateway(): { readonly sim: SimHandle; readonly gateway: GatewayHandle } {
  const handles = {} as { sim: SimHandle; gateway: GatewayHandle };
  beforeAll(async () => {
    handles.sim = await startSim({ profile: { ...E2E_PROFILE, decode: { baseMs: 2, perSeqMs: 0 } } });
    handles.gateway = await startGateway({ port: 0, upstream: { baseUrl: handles.sim.url } }, { tools: new Map() });
  });
  afterAll(async () => {
    await handles.gateway?.close();
    await handles.sim?.close();
  });
  return handles;
}
