import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_QUEUED_REQUESTS, DEFAULT_MAX_TOOL_CALLS_PER_ROUND, gatewayConfigSchema, MAX_TOOL_CALLS_PER_ROUND, MAX_TOOL_ROUNDS } from '../../gateway/config.ts';
import { MAX_FOLLOWERS_PER_REQUEST } from '../../gateway/request-events-socket.ts';
import { MAX_KEPT_EVENTS } from '../../gateway/timeline.ts';
import { MAX_KEPT_EVENTS_IN_ALL, MAX_KEPT_TIMELINES } from '../../gateway/timeline-store.ts';
import { DEFAULT_TOOL_MODULE_LOAD_MS } from '../../gateway/tool-module-load-time.ts';
import { UpstreamTimeoutsSchema } from '../../llm-client/upstream-options.ts';
import { resolvePythonSandboxOptions } from '../../sandbox/python-sandbox-options.ts';

// The defaults README.md states, read from the schemas and constants that set them. An operator
// sizes timeouts and limits by these figures; none of them is printed anywhere else. The upstream
// timeouts' defaults were in no doc at all.
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
const gateway = gatewayConfigSchema.parse({ upstream: { baseUrl: 'http://127.0.0.1:8000/v1' } });
const n = (value: number): string => value.toLocaleString('en-US');
const s = (ms: number): string => `${ms / 1000} s`;

describe('README.md, the defaults it states', () => {
  it("the upstream's per-phase timeouts", () => {
    const t = UpstreamTimeoutsSchema.parse({});
    expect(README).toContain(`\`connectMs\` ${s(t.connectMs)}, \`headersMs\` ${s(t.headersMs)}, \`firstTokenMs\` ${s(t.firstTokenMs)}, \`idleMs\` ${s(t.idleMs)} between chunks`);
    expect(t.totalMs).toBeUndefined();
    expect(README).toContain('`totalMs` unset, no limit on the whole request');
  });

  it('the tool rounds and calls a request may take', () => {
    expect(README).toContain(`upper bound on model → tool → model rounds: 1 to ${MAX_TOOL_ROUNDS}, default the gateway's \`--max-tool-rounds\` (${gateway.maxToolRounds})`);
    expect(README).toContain(`${DEFAULT_MAX_TOOL_CALLS_PER_ROUND} by default, up to ${n(MAX_TOOL_CALLS_PER_ROUND)}`);
    expect(README).toContain(`\`--max-queued-requests\` (${DEFAULT_MAX_QUEUED_REQUESTS})`);
  });

  it("the client's limits", () => {
    expect(README).toContain(`${n(gateway.maxObservationChars)} characters`);
    expect(README).toContain(`\`maxBodyBytes\` (config; ${gateway.maxBodyBytes / 1024 / 1024} MiB)`);
    expect(README).toContain(`\`clientStallMs\` (config; ${s(gateway.clientStallMs)}`);
    const { headersMs, requestMs, keepAliveMs } = gateway.clientTimeouts;
    expect(README).toContain(`Its headers must arrive within ${s(headersMs)} and its whole request, body included, within ${requestMs / 60_000} min`);
    expect(README).toContain(`An idle keep-alive connection is closed after ${s(keepAliveMs)}`);
  });

  it('the timelines kept and their followers', () => {
    expect(README).toContain(`Timelines are kept for the ${n(MAX_KEPT_TIMELINES)} most recent requests, each with at most ${n(MAX_KEPT_EVENTS)} events`);
    expect(README).toContain(`at most ${n(MAX_KEPT_EVENTS_IN_ALL)} events in all`);
    expect(README).toContain(`a request takes at most ${MAX_FOLLOWERS_PER_REQUEST} followers at once`);
  });

  it('the tool modules and the Python cells', () => {
    expect(README).toContain(`\`toolModuleLoadSeconds\` (${DEFAULT_TOOL_MODULE_LOAD_MS / 1000}:`);
    const sandbox = resolvePythonSandboxOptions({ python: '/usr/bin/python3' });
    expect(README).toContain(`\`sandbox.maxCells\`, default ${sandbox.maxCells} open`);
    expect(README).toContain(`\`sandbox.maxQueuedCells\`, default ${sandbox.maxQueuedCells} waiting`);
  });
});
