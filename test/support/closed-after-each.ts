import { afterAll, afterEach } from 'vitest';
import { closeUpstreamPools } from '../../llm-client/index.ts';
import { startTestUpstream, type TestUpstream, type UpstreamHandler } from '../llm-client/upstream-test-server.ts';

interface Closable {
  close(): Promise<void>;
}

/**
 * Scripted upstreams, and gateways over them, made for one test and closed after it (gateways
 * first, so none is left pointing at a closed upstream), the upstream pools after the file.
 */
export function closedAfterEach(): { upstream(handler: UpstreamHandler): Promise<TestUpstream>; keep<T extends Closable>(gateway: T): T } {
  const opened: Closable[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close()));
  });
  afterAll(closeUpstreamPools);
  return {
    async upstream(handler) {
      const u = await startTestUpstream(handler);
      opened.push(u);
      return u;
    },
    keep(gateway) {
      opened.unshift(gateway);
      return gateway;
    },
  };
}
