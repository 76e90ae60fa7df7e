import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { SINE_STDLIB_REQUEST, startTestConveyor } from '../support/conveyor-fixture.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';
import { withoutRequestPart } from '../support/call-ids.ts';

// What the scenario's script prints, computed independently of the sandbox.
const EXPECTED_LAST_LINE = 'samples=13 peak=1.000';

describe('CodeGen over real HTTP: gateway + simulator + Python sandbox', () => {
  let conveyor: ConveyorHandle;
  let url: string;
  beforeAll(async () => {
    conveyor = await startTestConveyor();
    url = conveyor.gateway.url;
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  it('runs the first statements while the code block is still being decoded, then answers with the output', async () => {
    const streamed = await streamChat(url, SINE_STDLIB_REQUEST);
    expect(streamed.status).toBe(200);
    expect(streamed.done).toBe(true);
    expect(streamed.requestId).toMatch(/^chatcmpl-/);

    // Text reaches the client as standard chunks: round 1's code block, then round 2's answer.
    expect(streamed.content).toContain('```python\nimport math\n');
    expect(streamed.content).toContain('The script ran. Its output was:');
    expect(streamed.content).toContain(EXPECTED_LAST_LINE);

    // Extension events, in order.
    const types = streamed.events.map((e) => e.type);
    expect(types[0]).toBe('round.started');
    expect(types).toContain('tool_call.progress');
    const completed = streamed.events.find((e) => e.type === 'tool_call.completed');
    expect(completed).toMatchObject({ name: 'python', ok: true });
    expect(String(completed?.content)).toContain(EXPECTED_LAST_LINE);
    expect(types.indexOf('tool_call.started')).toBeLessThan(types.indexOf('tool_call.progress'));
    expect(types.lastIndexOf('round.started')).toBeGreaterThan(types.indexOf('tool_call.completed'));

    // The client saw a statement finish before the chunk that closes the code block.
    const firstProgress = streamed.chunks.findIndex((c) => c.conveyor?.type === 'tool_call.progress');
    let text = '';
    const closingFence = streamed.chunks.findIndex((c) => {
      text += c.choices[0]?.delta.content ?? '';
      return /```python[\s\S]*\n```/.test(text);
    });
    expect(firstProgress).toBeGreaterThan(0);
    expect(firstProgress).toBeLessThan(closingFence);

    // The timeline says the same with monotonic timestamps: a unit ran before the decode ended.
    const timeline = await getJson(url, `/v1/requests/${streamed.requestId}/timeline`);
    expect(timeline.status).toBe(200);
    const events = timeline.json.events as TimelineEvent[];
    const at = (type: string, round = 1) => events.findIndex((e) => e.type === type && e.round === round);
    expect(at('unit-done')).toBeGreaterThan(at('call-start'));
    expect(at('unit-done')).toBeLessThan(at('call-end'));
    expect(at('unit-done')).toBeLessThan(at('decode-end'));
    expect(events[at('unit-done')]!.t).toBeLessThan(events[at('decode-end')]!.t);
    expect(at('tool-end')).toBeGreaterThan(at('decode-end'));
    expect(at('round-start', 2)).toBeGreaterThan(at('tool-end'));
    expect(timeline.json.rounds).toHaveLength(2);
  });

  it('gives the same messages and tool output with partial execution off (the sequential baseline)', async () => {
    const [on, off] = await Promise.all([
      postJson(url, '/v1/chat/completions', { ...SINE_STDLIB_REQUEST, partial_execution: true }),
      postJson(url, '/v1/chat/completions', { ...SINE_STDLIB_REQUEST, partial_execution: false }),
    ]);
    expect(on.status).toBe(200);
    expect(off.status).toBe(200);
    expect(on.json.conveyor.partial_execution).toBe(true);
    expect(off.json.conveyor.partial_execution).toBe(false);

    expect(withoutRequestPart(off.json.conveyor.messages)).toEqual(withoutRequestPart(on.json.conveyor.messages));
    expect(off.json.choices[0].message.content).toBe(on.json.choices[0].message.content);
    const [assistant, tool] = on.json.conveyor.messages;
    expect(assistant).toMatchObject({ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'python' } }] });
    expect(tool).toMatchObject({ role: 'tool', tool_call_id: assistant.tool_calls[0].id });
    expect(tool.content).toContain(EXPECTED_LAST_LINE);

    // Off really is sequential: no statement ran before the decode ended.
    const timeline = await getJson(url, `/v1/requests/${off.headers.get('x-conveyor-request-id')}/timeline`);
    const events = timeline.json.events as TimelineEvent[];
    const at = (type: string) => events.findIndex((e) => e.type === type && e.round === 1);
    expect(at('tool-start')).toBeGreaterThan(at('decode-end'));
    expect(at('unit-done')).toBeGreaterThan(at('decode-end'));
  });

  it('streams and answers non-streamed with the same content', async () => {
    const [streamed, whole] = await Promise.all([streamChat(url, SINE_STDLIB_REQUEST), postJson(url, '/v1/chat/completions', SINE_STDLIB_REQUEST)]);
    expect(streamed.content).toBe(whole.json.choices[0].message.content);
    expect(whole.json.object).toBe('chat.completion');
    expect(whole.json.choices[0].finish_reason).toBe('stop');
    expect(whole.json.usage.completion_tokens).toBeGreaterThan(0);

    // The turns to append to the history: round 1's text with its python call, the script's
    // output, then round 2's answer on its own; the streamed content is both rounds' text joined.
    const turns = streamed.events.find((e) => e.type === 'response.messages')!.messages as Array<{ role: string; content: string }>;
    expect(turns.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect(withoutRequestPart(turns.slice(0, 2))).toEqual(withoutRequestPart(whole.json.conveyor.messages));
    expect(turns[0]!.content).toContain('```python\nimport math\n');
    expect(turns[2]!.content).toMatch(/^The script ran\. Its output was:/);
    const first = turns[0]!.content;
    const joiner = first.endsWith('\n\n') ? '' : first.endsWith('\n') ? '\n' : '\n\n';
    expect(streamed.content).toBe(first + joiner + turns[2]!.content);
  });

  it("shows the sandbox's cells on /health and /metrics: open while a call runs, closed once its answer is done", async () => {
    const cellsMetric = async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(/^conveyor_python_cells\{state="open"\} (\d+)$/m.exec(text)?.[1]);
    };
    // Scraped as the first tool progress arrives: the call's cell is still open then.
    let whileRunning: Promise<number> | undefined;
    const watched = streamChat(url, SINE_STDLIB_REQUEST, (chunk) => {
      if (chunk.conveyor?.type === 'tool_call.progress') whileRunning ??= cellsMetric();
    });
    await Promise.all([watched, streamChat(url, SINE_STDLIB_REQUEST)]);
    expect(await whileRunning).toBeGreaterThanOrEqual(1);
    expect(await cellsMetric()).toBe(0);
    const health = await getJson(url, '/health');
    expect(health.json.sandbox.cells).toEqual({ open: 0, queued: 0, maxCells: 256, maxQueuedCells: 1024 });
  });
});
