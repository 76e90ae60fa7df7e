import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ChatChunkWriter } from '../../gateway/chat-chunk-writer.ts';
import type { SessionEvent, SessionResult } from '../../gateway/session.ts';
import { SseWriter } from '../../gateway/sse-writer.ts';
import { Timeline } from '../../gateway/timeline.ts';

/** A ServerResponse that records what is written (the SSE bytes), nothing else. */
function recordingResponse() {
  const writes: string[] = [];
  const res = {
    writeHead: () => res,
    flushHeaders: () => {},
    once: () => res,
    write: (text: string) => writes.push(text),
    end: () => {},
  };
  return { res: res as unknown as ServerResponse, writes };
}

// The chunks as the writer built them before it serialised its envelope once (JSON.stringify of
// the whole object): the wire format the template path must reproduce byte for byte.
function expectedChunk(id: string, created: number, model: string, rest: Record<string, unknown>): string {
  return `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, ...rest })}\n\n`;
}
const choice = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
});

/**
 * A clock whose every reading is 1.5 ms after the last, and round n's start at n/4 ms: the `t`s a
 * byte-for-byte expectation can write down. (The real one, the request's Timeline, is tested below.)
 */
const steppingClock = () => {
  let ms = 0;
  return { now: () => (ms += 1.5), first: (_type: 'round-start', round: number) => ({ t: round / 4 }) };
};

const TEXTS = ['Hello', ' wörld 👋', 'quote " backslash \\ slash /', 'line\nbreak\r\ttab', '\u2028\u2029 separators', 'lone \ud800 surrogate', '', '\u0000\u001f controls'];

describe('ChatChunkWriter', () => {
  it('writes the same bytes as serialising each whole chunk object, for any text and model name', () => {
    for (const model of ['mistral-7b-instruct-sim', 'we"ird\\model\u2028']) {
      const { res, writes } = recordingResponse();
      const id = 'chatcmpl-0123456789abcdef0123456789abcdef';
      const writer = new ChatChunkWriter(new SseWriter(res), id, model, { includeUsage: true, conveyorEvents: true, clock: steppingClock() });
      const created = Math.floor(Date.now() / 1000);
      writer.start();
      const events: SessionEvent[] = [
        { type: 'round-start', round: 1 },
        ...TEXTS.map((text): SessionEvent => ({ type: 'content', text })),
        ...TEXTS.map((text): SessionEvent => ({ type: 'reasoning', text })),
        { type: 'client-call-start', index: 0, callId: 'call_1', name: 'get_weather' },
        { type: 'client-call-args', index: 0, text: '{"city": "Par' },
        ...TEXTS.map((text, i): SessionEvent => ({ type: 'client-call-args', index: i % 3, text })),
        { type: 'tool-result', round: 1, callId: 'call_r1_1', name: 'calculator', ok: true, content: '6', data: { expression: '2*3', value: '6' } },
        { type: 'tool-result', round: 1, callId: 'call_r1_2', name: 'calculator', ok: true, content: '7' },
        { type: 'round-end', round: 1, finishReason: 'stop' },
      ];
      for (const e of events) writer.event(e);
      const usage = { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 };
      const messages = [
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_r1_1', type: 'function', function: { name: 'calculator', arguments: '{"expression": "2*3"}' } }] },
        { role: 'tool', tool_call_id: 'call_r1_1', content: '6' },
      ];
      writer.finish({ finishReason: 'stop', stopReason: 'answer', usage, messages, answer: 'It is 6.' } as SessionResult);

      // `created` is whole seconds; a test running across a second boundary compares with the previous one.
      // include_usage: every chunk before the usage chunk has `"usage": null`, as OpenAI's do.
      const at = (c: number) => [
        ...[
          choice({ role: 'assistant', content: '' }),
          ...TEXTS.map((text) => choice({ content: text })),
          ...TEXTS.map((text) => choice({ reasoning_content: text })),
          choice({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
          choice({ tool_calls: [{ index: 0, function: { arguments: '{"city": "Par' } }] }),
          ...TEXTS.map((text, i) => choice({ tool_calls: [{ index: i % 3, function: { arguments: text } }] })),
          // Held back until the round's first gateway tool event.
          { choices: [], conveyor: { type: 'round.started', t: 0.25, round: 1 } },
          { choices: [], conveyor: { type: 'tool_call.completed', t: 1.5, round: 1, call_id: 'call_r1_1', name: 'calculator', ok: true, content: '6', data: { expression: '2*3', value: '6' } } },
          { choices: [], conveyor: { type: 'tool_call.completed', t: 3, round: 1, call_id: 'call_r1_2', name: 'calculator', ok: true, content: '7' } },
          { choices: [], conveyor: { type: 'round.finished', t: 4.5, round: 1, finish_reason: 'stop' } },
          { choices: [], conveyor: { type: 'response.messages', t: 6, stop_reason: 'answer', messages: [...messages, { role: 'assistant', content: 'It is 6.' }] } },
          choice({}, 'stop'),
        ].map((rest) => expectedChunk(id, c, model, { ...rest, usage: null })),
        expectedChunk(id, c, model, { choices: [], usage }),
        'data: [DONE]\n\n',
      ];
      expect([at(created), at(created - 1)]).toContainEqual(writes);
    }
  });

  it('with continuous usage, closes every chunk after the first usage with the usage so far, all rounds summed', () => {
    const { res, writes } = recordingResponse();
    const id = 'chatcmpl-1';
    const writer = new ChatChunkWriter(new SseWriter(res), id, 'm', { includeUsage: true, continuousUsage: true, conveyorEvents: true, clock: steppingClock() });
    const created = Math.floor(Date.now() / 1000);
    const u = (prompt: number, completion: number) => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
    writer.start();
    const events: SessionEvent[] = [
      { type: 'round-start', round: 1 },
      { type: 'usage', round: 1, usage: u(10, 1) },
      { type: 'content', text: 'a' },
      { type: 'usage', round: 1, usage: u(10, 2) },
      { type: 'reasoning', text: 'r' },
      { type: 'tool-call', round: 1, callId: 'call_r1_1', name: 'calc' },
      { type: 'round-end', round: 1, finishReason: 'tool_calls' },
      { type: 'round-start', round: 2 },
      { type: 'usage', round: 2, usage: u(20, 1) },
      { type: 'client-call-start', index: 0, callId: 'call_1', name: 'f' },
    ];
    for (const e of events) writer.event(e);
    writer.finish({ finishReason: 'tool_calls', usage: u(30, 3), messages: [] } as unknown as SessionResult);
    const at = (c: number) => [
      expectedChunk(id, c, 'm', { ...choice({ role: 'assistant', content: '' }), usage: null }), // before any usage: null
      expectedChunk(id, c, 'm', { ...choice({ content: 'a' }), usage: u(10, 1) }),
      expectedChunk(id, c, 'm', { ...choice({ reasoning_content: 'r' }), usage: u(10, 2) }),
      expectedChunk(id, c, 'm', { choices: [], conveyor: { type: 'round.started', t: 0.25, round: 1 }, usage: u(10, 2) }),
      expectedChunk(id, c, 'm', { choices: [], conveyor: { type: 'tool_call.started', t: 1.5, round: 1, call_id: 'call_r1_1', name: 'calc' }, usage: u(10, 2) }),
      expectedChunk(id, c, 'm', { choices: [], conveyor: { type: 'round.finished', t: 3, round: 1, finish_reason: 'tool_calls' }, usage: u(10, 2) }),
      expectedChunk(id, c, 'm', { choices: [], conveyor: { type: 'round.started', t: 0.5, round: 2 }, usage: u(10, 2) }),
      expectedChunk(id, c, 'm', { ...choice({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }), usage: u(30, 3) }),
      expectedChunk(id, c, 'm', { ...choice({}, 'tool_calls'), usage: u(30, 3) }),
      expectedChunk(id, c, 'm', { choices: [], usage: u(30, 3) }),
      'data: [DONE]\n\n',
    ];
    expect([at(created), at(created - 1)]).toContainEqual(writes);
  });

  it('with conveyor_events off, writes no extension chunk but carries the response.messages turns on the finish chunk', () => {
    const { res, writes } = recordingResponse();
    const id = 'chatcmpl-2';
    const writer = new ChatChunkWriter(new SseWriter(res), id, 'm', { includeUsage: false, conveyorEvents: false, clock: steppingClock() });
    const created = Math.floor(Date.now() / 1000);
    writer.start();
    const events: SessionEvent[] = [
      { type: 'round-start', round: 1 },
      { type: 'content', text: 'a' },
      { type: 'tool-call', round: 1, callId: 'call_r1_1', name: 'calculator' },
      { type: 'tool-result', round: 1, callId: 'call_r1_1', name: 'calculator', ok: true, content: '6' },
      { type: 'round-end', round: 1, finishReason: 'stop' },
    ];
    for (const e of events) writer.event(e);
    const messages = [{ role: 'tool', tool_call_id: 'call_r1_1', content: '6' }];
    writer.finish({ finishReason: 'stop', usage: {}, messages, answer: 'It is 6.' } as unknown as SessionResult);
    const turns = { type: 'response.messages', t: 1.5, messages: [...messages, { role: 'assistant', content: 'It is 6.' }] };
    const at = (c: number) => [
      expectedChunk(id, c, 'm', choice({ role: 'assistant', content: '' })),
      expectedChunk(id, c, 'm', choice({ content: 'a' })),
      expectedChunk(id, c, 'm', { ...choice({}, 'stop'), conveyor: turns }),
      'data: [DONE]\n\n',
    ];
    expect([at(created), at(created - 1)]).toContainEqual(writes);

    // No tool ran: nothing to carry, a plain finish chunk.
    const plain = recordingResponse();
    const quiet = new ChatChunkWriter(new SseWriter(plain.res), id, 'm', { includeUsage: false, conveyorEvents: false, clock: steppingClock() });
    quiet.finish({ finishReason: 'stop', usage: {}, messages: [], answer: 'a' } as unknown as SessionResult);
    expect([expectedChunk(id, created, 'm', choice({}, 'stop')), expectedChunk(id, created - 1, 'm', choice({}, 'stop'))]).toContain(plain.writes[0]);
  });

  it('with only client tool calls, sends no extension chunk: the turns ride on the finish chunk, every chunk has its choice', () => {
    const { res, writes } = recordingResponse();
    const id = 'chatcmpl-3';
    const writer = new ChatChunkWriter(new SseWriter(res), id, 'm', { includeUsage: false, conveyorEvents: true, clock: steppingClock() });
    const created = Math.floor(Date.now() / 1000);
    writer.start();
    const events: SessionEvent[] = [
      { type: 'round-start', round: 1 },
      { type: 'client-call-start', index: 0, callId: 'call_1', name: 'get_weather' },
      { type: 'client-call-args', index: 0, text: '{"city": "Paris"}' },
      { type: 'round-end', round: 1, finishReason: 'tool_calls' },
    ];
    for (const e of events) writer.event(e);
    const messages = [{ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] }];
    writer.finish({ finishReason: 'tool_calls', usage: {}, messages } as unknown as SessionResult);
    const at = (c: number) => [
      expectedChunk(id, c, 'm', choice({ role: 'assistant', content: '' })),
      expectedChunk(id, c, 'm', choice({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] })),
      expectedChunk(id, c, 'm', choice({ tool_calls: [{ index: 0, function: { arguments: '{"city": "Paris"}' } }] })),
      expectedChunk(id, c, 'm', { ...choice({}, 'tool_calls'), conveyor: { type: 'response.messages', t: 1.5, messages } }),
      'data: [DONE]\n\n',
    ];
    expect([at(created), at(created - 1)]).toContainEqual(writes);
  });

  it("sends a tool's result without a data that is not JSON (a tool made without the kit), rather than failing the stream", () => {
    const { res, writes } = recordingResponse();
    const writer = new ChatChunkWriter(new SseWriter(res), 'chatcmpl-4', 'm', { includeUsage: false, conveyorEvents: true, clock: steppingClock() });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    writer.event({ type: 'tool-call', round: 1, callId: 'c1', name: 'odd' });
    writer.event({ type: 'tool-result', round: 1, callId: 'c1', name: 'odd', ok: true, content: 'fine', data: { n: 10n } as unknown as Record<string, unknown> });
    writer.event({ type: 'tool-result', round: 1, callId: 'c1', name: 'odd', ok: true, content: 'fine', data: cyclic });
    const completed = writes.filter((w) => w.includes('tool_call.completed')).map((w) => JSON.parse(w.slice('data: '.length)).conveyor);
    expect(completed).toEqual([0, 1].map(() => ({ type: 'tool_call.completed', t: expect.any(Number), round: 1, call_id: 'c1', name: 'odd', ok: true, content: 'fine' })));
  });

  it("times every extension event on the request's timeline: a round's start at the timeline's round-start (though held back), the rest as written, in order", () => {
    const { res, writes } = recordingResponse();
    const timeline = new Timeline('req-t');
    const writer = new ChatChunkWriter(new SseWriter(res), 'chatcmpl-5', 'm', { includeUsage: false, conveyorEvents: true, clock: timeline });
    // As session-round.ts does: the timeline marks each round's start and end, then the writer hears of it.
    const startRound = (round: number) => {
      timeline.mark('round-start', { round });
      writer.event({ type: 'round-start', round });
    };
    const endRound = (round: number, finishReason: string) => {
      timeline.mark('round-end', { round, detail: finishReason });
      writer.event({ type: 'round-end', round, finishReason });
    };
    writer.start();
    startRound(1);
    writer.event({ type: 'content', text: 'Let me run it.' });
    writer.event({ type: 'tool-call', round: 1, callId: 'c1', name: 'python' });
    writer.event({ type: 'tool-progress', callId: 'c1', name: 'python', progress: { type: 'unit-done', detail: 'lines 1-1' } });
    writer.event({ type: 'tool-progress', callId: 'c1', name: 'python', progress: { type: 'output', stream: 'stdout', text: '1\n' } });
    writer.event({ type: 'tool-result', round: 1, callId: 'c1', name: 'python', ok: true, content: '1' });
    endRound(1, 'stop');
    startRound(2);
    writer.event({ type: 'tool-call', round: 2, callId: 'c2', name: 'python' });
    writer.event({ type: 'tool-cancelled', round: 2, callId: 'c2', name: 'python', reason: 'malformed' });
    endRound(2, 'stop');
    writer.finish({ finishReason: 'stop', stopReason: 'answer', usage: {}, messages: [{ role: 'tool', tool_call_id: 'c1', content: '1' }], answer: 'Done.' } as unknown as SessionResult);
    const after = timeline.now();

    const events = writes.flatMap((w) => w.split('\n\n')).filter((w) => w.startsWith('data: {')).map((w) => JSON.parse(w.slice('data: '.length)).conveyor).filter((e) => e !== undefined);
    expect(events.map((e) => e.type)).toEqual(['round.started', 'tool_call.started', 'tool_call.progress', 'tool_call.output', 'tool_call.completed', 'round.finished', 'round.started', 'tool_call.started', 'tool_call.cancelled', 'round.finished', 'response.messages']);
    expect(events[0].t).toBe(timeline.first('round-start', 1)!.t);
    expect(events[6].t).toBe(timeline.first('round-start', 2)!.t);
    const times: number[] = events.map((e) => e.t);
    // Ms since the request started, to the microsecond, as the timeline's own; never going back, nor past now.
    for (const t of times) expect(Math.round(t * 1000) / 1000).toBe(t);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times.at(-1)).toBeLessThanOrEqual(after);
  });

  it('splits a multi-line payload into several data lines', () => {
    const { res, writes } = recordingResponse();
    new SseWriter(res).data('a\nb');
    expect(writes).toEqual(['data: a\ndata: b\n\n']);
  });
});

describe('SseWriter.group', () => {
  it('sends the events written inside it in one write when it returns, in order', () => {
    const { res, writes } = recordingResponse();
    const sse = new SseWriter(res);
    sse.data('first');
    sse.group(() => {
      sse.data('a');
      sse.group(() => sse.data('b')); // joins the outer group
      sse.comment('keep-alive');
      expect(writes).toEqual(['data: first\n\n']);
    });
    sse.data('after');
    expect(writes).toEqual(['data: first\n\n', 'data: a\n\ndata: b\n\n: keep-alive\n\n', 'data: after\n\n']);
  });

  it('writes nothing for an empty group, and flushes a group the stream ends inside of before the end', () => {
    const { res, writes } = recordingResponse();
    const ended: string[] = [];
    (res as unknown as { end: () => void }).end = () => ended.push(`end after ${writes.length} writes`);
    const sse = new SseWriter(res);
    sse.group(() => {});
    expect(writes).toEqual([]);
    sse.group(() => {
      sse.data('last');
      sse.data('[DONE]');
      sse.end();
      sse.data('dropped');
    });
    expect(writes).toEqual(['data: last\n\ndata: [DONE]\n\n']);
    expect(ended).toEqual(['end after 1 writes']);
  });
});

