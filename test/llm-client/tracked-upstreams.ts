import { afterAll, afterEach } from 'vitest';
import { closeUpstreamPools } from '../../llm-client/index.ts';
import type { TestUpstream } from './upstream-test-server.ts';

/**
 * Call at a test file's top level: upstreams started through the returned `track` close after
 * each test, and the client's pools after the file (a pooled socket would keep the worker alive).
 */
export function trackedUpstreams(): (server: Promise<TestUpstream>) => Promise<TestUpstream> {
  const servers: TestUpstream[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  afterAll(closeUpstreamPools);
  return async (server) => {
    servers.push(await server);
    return servers.at(-1)!;
  };
}
