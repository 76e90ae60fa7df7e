import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { eventually, SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { getJson, postJson } from '../support/sse-client.ts';
import { buildSampleSearchIndex } from '../support/sample-search-index.ts';

interface Message {
  role: string;
  content: string | null;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

const tool = (name: string) => ({ type: 'function', function: { name } });

/**
 * The gateway in front of an upstream that parses tool calls itself (vLLM with
 * `--enable-auto-tool-choice --tool-call-parser mistral`, here the simulator in that mode): the
 * calls arrive as `delta.tool_calls`, not as text, and still run while they are decoded.
 */
describe('an upstream with its own tool parser: calls arrive as delta.tool_calls', () => {
  let dir: string;
  let conveyor: ConveyorHandle;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conveyor-upstream-parser-'));
    const index = await buildSampleSearchIndex(dir);
    conveyor = await startTestConveyor({
      sim: { toolCallParser: 'mistral' },
      plugins: { search: { index, maxResults: 2 }, python: false, database: false, plan: false, calculator: false, http_get: false },
    });
  });
  afterAll(async () => {
    await conveyor?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function timeline(res: { headers: Headers }): Promise<TimelineEvent[]> {
    const got = await getJson(conveyor.gateway.url, `/v1/requests/${res.headers.get('x-conveyor-request-id')}/timeline`);
    return got.json.events as TimelineEvent[];
  }

  it('search: the first query runs while the third call is still being decoded; same results and answer as from text', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', {
      model: SIM_MODEL,
      scenario: 'search-hello-world',
      tools: [tool('search')],
      messages: [{ role: 'user', content: 'Show me hello world programs in Python, C++ and Java.' }],
    });
    expect(res.status).toBe(200);
    const [assistant, ...tools] = res.json.conveyor.messages as Message[];
    const calls = assistant!.tool_calls!;
    // The ids the gateway gives calls that came as delta.tool_calls (from text they are call_<request>_r1_<n>).
    for (const call of calls) expect(call.id).toMatch(/^call_[0-9a-f]{8}_r1_tc\d+$/);
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['search', { query: 'hello world Python' }],
      ['search', { query: 'hello world C++' }],
      ['search', { query: 'hello world Java' }],
    ]);
    expect(tools.map((t) => [t.tool_call_id, t.content!.split('\n')[0]])).toEqual([
      [calls[0]!.id, '1. Hello, World! in Python'],
      [calls[1]!.id, '1. Hello, World! in C++'],
      [calls[2]!.id, '1. Hello, World! in Java'],
    ]);
    const answer = res.json.choices[0].message.content as string;
    expect(answer).toContain('I found a hello-world page for each of Python, C++ and Java');
    expect(answer).toContain(tools[2]!.content!.trimEnd().split('\n').at(-1));

    const events = await timeline(res);
    const at = (type: string, callId: string) => events.findIndex((e) => e.type === type && e.callId === callId && e.round === 1);
    expect(events.find((e) => e.type === 'piece' && e.callId === calls[0]!.id)?.detail).toBe('field query');
    expect(at('tool-start', calls[0]!.id)).toBeGreaterThanOrEqual(0);
    expect(at('tool-start', calls[0]!.id)).toBeLessThan(at('call-end', calls[2]!.id));
    expect(at('call-end', calls[2]!.id)).toBeLessThan(events.findIndex((e) => e.type === 'decode-end' && e.round === 1));
  });

  it('validation: an invalid location is rejected at its field and the upstream decode is cut short', async () => {
    const before = conveyor.sim!.counters().abortedSequences;
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', {
      model: SIM_MODEL,
      scenario: 'validation',
      tools: [tool('local_news')],
      messages: [{ role: 'user', content: 'What is the local news in Paris?' }],
    });
    expect(res.status).toBe(200);
    expect(res.json.conveyor.rounds).toBe(3);
    const [first, rejection] = res.json.conveyor.messages as Message[];
    const rejectedId = first!.tool_calls![0]!.id;
    expect(rejectedId).toMatch(/^call_[0-9a-f]{8}_r1_tc\d+$/);
    expect(rejection!.content).toBe('error: local_news rejected the call: location: must be "City, ST" (e.g. "Austin, TX"), got "Paris"');
    expect(res.json.choices[0].message.content).toContain('Here is the local news request for Paris, TX:');

    await eventually(() => conveyor.sim!.counters().abortedSequences === before + 1, 'the rejected decode was aborted');
    const events = await timeline(res);
    const rejected = events.findIndex((e) => e.type === 'abort' && e.callId === rejectedId && e.detail?.startsWith('rejected: location'));
    const decodeEnd = events.findIndex((e) => e.type === 'decode-end' && e.round === 1);
    expect(rejected).toBeGreaterThan(events.findIndex((e) => e.type === 'piece' && e.callId === rejectedId && e.detail === 'field location'));
    expect(rejected).toBeLessThan(decodeEnd);
    expect(events[decodeEnd]!.detail).toBe('tool_rejected');
  });
});
