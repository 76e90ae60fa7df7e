import { describe, expect, it } from 'vitest';
import { DONE, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

type Message = { role: string; content?: string | null; [key: string]: unknown };

/** Qwen3 matches the gateway's `qwen3` rule: hermes calls, `<think>` blocks taken out as reasoning. */
const QWEN3 = 'Qwen/Qwen3-8B';
const CALL = '<tool_call>\n{"name": "lookup", "arguments": {"q": "tides"}}\n</tool_call>';
const lookup = () => toolMap(answeringTool('lookup', () => 'high tide at 06:12'));
const ask = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'When is high tide?' }], ...extra });

/** An upstream that calls `lookup` in round 1 (its deltas as given) and answers once it has the result. */
function thinkingUpstream(round1: Array<Record<string, unknown>>) {
  return (_req: unknown, res: import('node:http').ServerResponse, body: unknown) => {
    const answered = (body as { messages: Message[] }).messages.at(-1)!.role === 'tool';
    const deltas = answered ? [{ content: 'High tide is at 06:12.' }] : round1;
    sseHeaders(res);
    res.end([vllmChunk({ role: 'assistant', content: '' }), ...deltas.map((d) => vllmChunk(d)), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
  };
}

const scripted = scriptedGateway();
/** The assistant turn the gateway wrote for round 1, as round 2's request carried it. */
const round1Turn = () => (scripted.upstream.requests[1]!.body as { messages: Message[] }).messages[1]!;

describe("a thinking model's reasoning goes back with its tool round", () => {
  it('puts a <think> block the gateway parsed back before the turn it came with, as the model wrote it', async () => {
    const gateway = await scripted.start(
      thinkingUpstream([{ content: '<think>\nThe user wants tides.' }, { content: ' I will look it up.\n</think>\n\n' }, { content: CALL }]),
      { tools: lookup() },
    );
    const res = await postJson(gateway.url, '/v1/chat/completions', ask(QWEN3));
    expect(res.status).toBe(200);
    expect(scripted.upstream.requests).toHaveLength(2);
    const turn = round1Turn();
    expect(turn.role).toBe('assistant');
    // Qwen3's template splits a turn's content at </think> and shows the reasoning of the turns since the last user message.
    // The newlines between the block and the call are frame, as the call's own markup is (the template writes both anew).
    expect(turn.content).toBe('<think>\nThe user wants tides. I will look it up.\n</think>');
    expect(turn).not.toHaveProperty('reasoning_content');
    expect(turn).not.toHaveProperty('reasoning');
    expect((turn.tool_calls as Array<{ function: { name: string } }>)[0]!.function.name).toBe('lookup');
    // The client still sees the reasoning apart from the answer.
    expect(res.json.choices[0].message.reasoning_content).toContain('I will look it up.');
    // Not the newlines round 1 wrote between its block and its call: whitespace before a call is frame.
    expect(res.json.choices[0].message.content).toBe('High tide is at 06:12.');
  });

  it('keeps the text a round wrote after its reasoning, after the block', async () => {
    const gateway = await scripted.start(thinkingUpstream([{ content: '<think>Tides need a lookup.</think>Let me check.\n' }, { content: CALL }]), { tools: lookup() });
    await streamChat(gateway.url, ask(QWEN3, { stream: true }));
    expect(round1Turn().content).toBe('<think>Tides need a lookup.</think>Let me check.\n');
  });

  it('sends reasoning an upstream parser streamed back in the field it came in', async () => {
    const cases = [
      // Newer vLLM sends both names and reads `reasoning` back.
      { delta: { reasoning: 'Need tides.', reasoning_content: 'Need tides.' }, field: 'reasoning', other: 'reasoning_content' },
      // llama.cpp (and vLLM before the rename) send `reasoning_content`.
      { delta: { reasoning_content: 'Need tides.' }, field: 'reasoning_content', other: 'reasoning' },
    ];
    for (const { delta, field, other } of cases) {
      const gateway = await scripted.start(
        thinkingUpstream([delta, { tool_calls: [{ index: 0, id: 'chatcmpl-tool-1', type: 'function', function: { name: 'lookup', arguments: '{"q": "tides"}' } }] }]),
        { tools: lookup() },
      );
      // A model whose rule takes no <think> blocks: the upstream's reasoning parser did the splitting.
      const res = await postJson(gateway.url, '/v1/chat/completions', ask('Qwen/Qwen2.5-7B-Instruct'));
      expect(res.status, field).toBe(200);
      const turn = round1Turn();
      expect(turn[field], field).toBe('Need tides.');
      expect(turn, field).not.toHaveProperty(other);
      expect(turn.content, field).toBeNull();
      expect(res.json.choices[0].message.reasoning_content, field).toBe('Need tides.');
    }
  });

  it("puts a <think> model's reasoning back in its block even when an upstream parser split it off (every vLLM reads that)", async () => {
    const gateway = await scripted.start(
      thinkingUpstream([{ reasoning_content: 'Need tides.' }, { content: CALL }]),
      { tools: lookup() },
    );
    await postJson(gateway.url, '/v1/chat/completions', ask(QWEN3));
    const turn = round1Turn();
    expect(turn.content).toBe('<think>Need tides.</think>');
    expect(turn).not.toHaveProperty('reasoning_content');
  });

  it('adds nothing to the turn of a round that did not think', async () => {
    const gateway = await scripted.start(thinkingUpstream([{ content: CALL }]), { tools: lookup() });
    await postJson(gateway.url, '/v1/chat/completions', ask(QWEN3));
    const turn = round1Turn();
    expect(turn.content).toBeNull();
    expect(Object.keys(turn).sort()).toEqual(['content', 'role', 'tool_calls']);
  });

  it('writes the same turn into response.messages with observations as user messages', async () => {
    const gateway = await scripted.start(
      (_req, res, body) => {
        const answered = (body as { messages: Message[] }).messages.at(-1)!.role === 'user' && (body as { messages: Message[] }).messages.length > 1;
        const content = answered ? 'High tide is at 06:12.' : `<think>Look it up.</think>${CALL}`;
        sseHeaders(res);
        res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      },
      { tools: lookup() },
      { observations: 'user' },
    );
    const res = await postJson(gateway.url, '/v1/chat/completions', ask(QWEN3));
    expect(round1Turn()).toEqual({ role: 'assistant', content: '<think>Look it up.</think>' });
    expect(res.json.conveyor.messages[0]).toEqual({ role: 'assistant', content: '<think>Look it up.</think>' });
  });
});

describe('a thinking model whose prompt opens the <think> block (Qwen3 thinking-2507, QwQ, DeepSeek-R1)', () => {
  const opened = scriptedGateway();

  it('takes its output up to </think> as reasoning: the call it weighs there never runs, the one after does', async () => {
    let calls = 0;
    // Each round's prompt opens the block again: round 2 thinks too before it answers.
    const gateway = await opened.start(
      (_req, res, body) => {
        const answered = (body as { messages: Message[] }).messages.at(-1)!.role === 'tool';
        const deltas = answered
          ? ['The table says 06:12.</think>', 'High tide is at 06:12.']
          : ['Tides need a lookup: <tool_call>\n{"name": "lookup", "arguments": {"q": "draft"}}\n</tool_call> would do.', '\n</think>\n\n', CALL];
        sseHeaders(res);
        res.end([vllmChunk({ role: 'assistant', content: '' }), ...deltas.map((content) => vllmChunk({ content })), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      },
      { tools: toolMap(answeringTool('lookup', (args) => `high tide at 06:12 (${String(args['q'])}, call ${++calls})`)) },
    );
    const res = await postJson(gateway.url, '/v1/chat/completions', ask('Qwen/Qwen3-30B-A3B-Thinking-2507'));
    expect(res.status).toBe(200);
    expect(calls).toBe(1);
    const message = res.json.choices[0].message;
    const round1 = 'Tides need a lookup: <tool_call>\n{"name": "lookup", "arguments": {"q": "draft"}}\n</tool_call> would do.\n';
    // Round 2's reasoning starts a paragraph of its own (round 1's ends with a newline: one more).
    expect(message.reasoning_content).toBe(`${round1}\nThe table says 06:12.`);
    expect(message.content).not.toContain('</think>');
    expect(message.content.trim()).toBe('High tide is at 06:12.');
    const turn = (opened.upstream.requests[1]!.body as { messages: Message[] }).messages[1]!;
    expect(turn.content).toBe(`<think>${round1}</think>`);
    expect((opened.upstream.requests[1]!.body as { messages: Message[] }).messages[2]!.content).toBe('high tide at 06:12 (tides, call 1)');
  });
});

describe("a hybrid model's request that switches thinking on (DeepSeek-V3.1, chat_template_kwargs.thinking)", () => {
  const hybrid = scriptedGateway();

  it('is read as starting in reasoning; without the switch the text is the answer as written', async () => {
    const gateway = await hybrid.start((_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'Two and two.</think>' }), vllmChunk({ content: 'Four.' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    });
    const ask31 = (extra: Record<string, unknown>) => postJson(gateway.url, '/v1/chat/completions', { model: 'deepseek-ai/DeepSeek-V3.1', messages: [{ role: 'user', content: '2+2?' }], ...extra });
    const on = await ask31({ chat_template_kwargs: { thinking: true } });
    expect(on.json.choices[0].message).toMatchObject({ content: 'Four.', reasoning_content: 'Two and two.' });
    // The switch goes upstream as sent: it is the template's.
    expect((hybrid.upstream.requests[0]!.body as { chat_template_kwargs?: unknown }).chat_template_kwargs).toEqual({ thinking: true });
    const off = await ask31({});
    expect(off.json.choices[0].message.content).toBe('Two and two.</think>Four.');
  });
});

describe('a thinking model behind an upstream that splits its reasoning off (vLLM --reasoning-parser)', () => {
  const split = scriptedGateway();

  it('takes the content as the answer, not as reasoning the prompt opened (DeepSeek-R1 with deepseek_r1)', async () => {
    const gateway = await split.start((_req, res) => {
      sseHeaders(res);
      const deltas = [{ reasoning_content: 'Two and two' }, { reasoning_content: ' make four.' }, { content: 'The answer is 4.' }];
      res.end([vllmChunk({ role: 'assistant', content: '' }), ...deltas.map((d) => vllmChunk(d)), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    });
    for (const stream of [false, true]) {
      const body = { model: 'deepseek-ai/DeepSeek-R1', messages: [{ role: 'user', content: '2+2?' }], stream };
      if (stream) {
        const streamed = await streamChat(gateway.url, body);
        expect(streamed.content).toBe('The answer is 4.');
        continue;
      }
      const res = await postJson(gateway.url, '/v1/chat/completions', body);
      // Before: the rule's prompt-opened block swallowed the answer into reasoning_content.
      expect(res.json.choices[0].message).toMatchObject({ content: 'The answer is 4.', reasoning_content: 'Two and two make four.' });
    }
  });
});

describe("a client's own tool loop with a thinking model", () => {
  const client = scriptedGateway();
  const earlier = (fields: Record<string, unknown>) => ({
    model: QWEN3,
    tools: [{ type: 'function', function: { name: 'get_tide', parameters: { type: 'object' } } }],
    messages: [
      { role: 'user', content: 'When is high tide?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_tide', arguments: '{}' } }], ...fields },
      { role: 'tool', tool_call_id: 'call_1', content: '06:12' },
    ],
  });
  const answering = (_req: unknown, res: import('node:http').ServerResponse) => {
    sseHeaders(res);
    res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'At 06:12.' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
  };
  const sentTurn = () => (client.upstream.requests[0]!.body as { messages: Message[] }).messages[1]!;

  it('sends the reasoning_content the gateway split off back inside the turn, as the model wrote it', async () => {
    for (const field of ['reasoning_content', 'reasoning']) {
      const gateway = await client.start(answering);
      const res = await postJson(gateway.url, '/v1/chat/completions', earlier({ [field]: 'Need the tide table.' }));
      expect(res.status, field).toBe(200);
      const turn = sentTurn();
      expect(turn.content, field).toBe('<think>Need the tide table.</think>');
      expect(Object.keys(turn).sort(), field).toEqual(['content', 'role', 'tool_calls']);
    }
  });

  it('leaves a turn that holds its block already, and a model whose <think> blocks the upstream splits, as the client sent them', async () => {
    let gateway = await client.start(answering);
    await postJson(gateway.url, '/v1/chat/completions', { ...earlier({ reasoning_content: 'again' }), messages: earlier({}).messages.map((m, i) => (i === 1 ? { ...m, content: '<think>Need it.</think>' } : m)) });
    expect(sentTurn().content).toBe('<think>Need it.</think>');

    gateway = await client.start(answering);
    await postJson(gateway.url, '/v1/chat/completions', { ...earlier({ reasoning_content: 'Need the tide table.' }), model: 'Qwen/Qwen2.5-7B-Instruct' });
    expect(sentTurn()).toMatchObject({ content: null, reasoning_content: 'Need the tide table.' });
  });
});
