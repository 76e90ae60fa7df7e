import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BoundedQueue } from '../../core/bounded-queue.ts';
import { GatewayMetrics } from '../../gateway/gateway-metrics.ts';
import { UpstreamReplicas } from '../../llm-client/upstream-replicas.ts';

// README's `GET /metrics` paragraph is the only list of the gateway's metric names an operator
// reads before writing a dashboard or an alert: a metric renamed or added in gateway-metrics.ts
// and not there is a query that silently returns nothing.
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const METRICS_PARAGRAPH = /`GET \/metrics` is Prometheus text[\s\S]*?\n\n/.exec(README)?.[0] ?? '';

/** `conveyor_…` names README gives, `{a,b}` after a trailing `_` expanded, a label list `{outcome}` dropped. */
function namesInReadme(): Set<string> {
  const names = new Set<string>();
  for (const [, stem, braces] of METRICS_PARAGRAPH.matchAll(/(conveyor_[a-z_]+)(?:\{([a-z_,]+)\})?/g)) {
    if (stem!.endsWith('_') && braces) for (const part of braces.split(',')) names.add(stem! + part);
    else names.add(stem!);
  }
  return names;
}

/** The metric families a gateway with every optional part (replicas, Python cells, a request limit) serves. */
async function servedNames(): Promise<Set<string>> {
  const metrics = new GatewayMetrics({
    replicas: new UpstreamReplicas(['http://a.test/v1', 'http://b.test/v1']),
    pythonCells: () => ({ open: 0, queued: 0, maxCells: 256, maxQueuedCells: 1024 }),
    admission: new BoundedQueue(1, 1, () => new Error('busy')),
    toolNames: ['python'],
  });
  const text = await metrics.render();
  return new Set([...text.matchAll(/^# TYPE (conveyor_\S+) /gm)].map((m) => m[1]!));
}

describe('README.md, GET /metrics', () => {
  it('names every conveyor_ metric the gateway serves, and none it does not', async () => {
    const served = [...(await servedNames())].sort();
    expect(served.length).toBeGreaterThan(10);
    expect([...namesInReadme()].sort()).toEqual(served);
  });
});
