import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson, streamChat, type ChatChunk } from '../support/sse-client.ts';

const TOOL_CALL = '[TOOL_CALLS][{"name": "save_note", "arguments": {"title": "groceries", "body": "eggs, milk"}}]';
const FENCE = 'Here you go:\n```python\nprint("ran")\n```\nDone.';

const SAVE_NOTE = {
  type: 'function',
  function: { name: 'save_note', parameters: { type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } } } },
};

type ToolCallDelta = { index: number; function?: { name?: string; arguments?: string } };
const toolCallDeltas = (chunks: ChatChunk[]): ToolCallDelta[] =>
  chunks.flatMap((c) => c.choices.flatMap((ch) => (ch.delta as { tool_calls?: ToolCallDelta[] }).tool_calls ?? []));
const finishReason = (chunks: ChatChunk[]) => chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).find((r) => r !== null);

describe('tool_parser "none": pass-through', () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor({
      sim: {
        scenarios: [
          { name: 'mistral-call', rules: [{ when: { explicit: true }, reply: TOOL_CALL }] },
          { name: 'python-fence', rules: [{ when: { explicit: true }, reply: FENCE }] },
        ],
      },
    });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  const callRequest = { model: SIM_MODEL, scenario: 'mistral-call', tools: [SAVE_NOTE], messages: [{ role: 'user', content: 'save a note' }] };

  it('recognises the [TOOL_CALLS] reply as a client tool call by default (the Mistral parser, chosen by model name)', async () => {
    const streamed = await streamChat(conveyor.gateway.url, callRequest);
    const deltas = toolCallDeltas(streamed.chunks);
    expect(deltas[0]?.function?.name).toBe('save_note');
    expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe('{"title": "groceries", "body": "eggs, milk"}');
    expect(streamed.content).toBe('');
    expect(finishReason(streamed.chunks)).toBe('tool_calls');
  });

  it('streams the same reply as plain content with no tool_calls when tool_parser is "none"', async () => {
    const streamed = await streamChat(conveyor.gateway.url, { ...callRequest, tool_parser: 'none' });
    expect(streamed.done).toBe(true);
    expect(streamed.content).toBe(TOOL_CALL);
    expect(toolCallDeltas(streamed.chunks)).toEqual([]);
    // No gateway tool ran: no extension chunk either, the stream is OpenAI's to the chunk.
    expect(streamed.events).toEqual([]);
    expect(streamed.chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(finishReason(streamed.chunks)).toBe('stop');
  });

  it('answers a non-streaming request with the raw text as content and no tool_calls', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', { ...callRequest, tool_parser: 'none' });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message).toEqual({ role: 'assistant', content: TOOL_CALL, refusal: null });
    expect(res.json.choices[0].finish_reason).toBe('stop');
    expect(res.json.conveyor.stop_reason).toBe('answer');
  });

  it('does not run a ```python fence either: the fence arrives as text and no tool is called', async () => {
    const streamed = await streamChat(conveyor.gateway.url, {
      model: SIM_MODEL,
      scenario: 'python-fence',
      tool_parser: 'none',
      messages: [{ role: 'user', content: 'print something' }],
    });
    expect(streamed.content).toBe(FENCE);
    expect(streamed.events).toEqual([]);
  });
});
