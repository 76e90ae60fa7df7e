import { describe, expect, it } from 'vitest';
import { Dispatcher } from '../../gateway/dispatcher.ts';
import { Timeline } from '../../gateway/timeline.ts';
import type { Piece } from '../../parsers/parser-events.ts';
import type { ToolPlugin, ToolProgress } from '../../plugins/plugin-types.ts';
import { MAX_PROGRESS_EVENTS, MAX_PROGRESS_TEXT, ProgressBudget } from '../../plugins/progress-budget.ts';
import { untilAbortedTool } from '../support/scripted-gateway.ts';

/** A line-consuming tool that records what reached it and when (relative to decode events). */
function recordingTool(log: string[], opts: { rejectOn?: string } = {}): ToolPlugin {
  return {
    name: 'echo',
    description: 'records lines',
    parameters: { type: 'object' },
    consumes: 'line',
    start: ({ callId }) => {
      log.push(`start ${callId}`);
      const lines: string[] = [];
      return {
        piece: async (piece: Piece) => {
          if (piece.kind !== 'line') return undefined;
          await new Promise((r) => setTimeout(r, 1));
          log.push(`piece ${piece.text.trim()}`);
          lines.push(piece.text);
          return piece.text.includes(opts.rejectOn ?? '\u0000') ? { verdict: 'reject', reason: 'bad line' } : undefined;
        },
        end: async () => {
          log.push('end');
          return { ok: true, content: lines.join('') };
        },
        abort: (reason) => log.push(`abort ${reason}`),
      };
    },
  };
}

function dispatcher(partialExecution: boolean, log: string[], ...tools: ToolPlugin[]) {
  const rejects: string[] = [];
  if (tools.length === 0) tools.push(recordingTool(log));
  const d = new Dispatcher({
    tools: new Map(tools.map((tool) => [tool.name, tool])),
    partialExecution,
    signal: new AbortController().signal,
    timeline: new Timeline('test'),
    round: 1,
    onProgress: () => {},
    onReject: (_call, reason) => rejects.push(reason),
  });
  return { d, rejects };
}

const line = (text: string, lineNo: number): Piece => ({ kind: 'line', text, lineNo });

describe('Dispatcher', () => {
  it('delivers pieces as they complete when partial execution is on', async () => {
    const log: string[] = [];
    const { d } = dispatcher(true, log);
    d.callStart('c1', 'echo');
    d.piece('c1', line('a = 1\n', 1));
    await new Promise((r) => setTimeout(r, 20));
    log.push('decode still running');
    d.piece('c1', line('b = 2\n', 2));
    d.callEnd('c1', { code: 'a = 1\nb = 2\n' });
    log.push('decode ended');
    d.endDecode();
    const [outcome] = await d.settle();
    expect(log).toEqual(['start c1', 'piece a = 1', 'decode still running', 'decode ended', 'piece b = 2', 'end']);
    expect(outcome).toMatchObject({ callId: 'c1', name: 'echo', result: { ok: true, content: 'a = 1\nb = 2\n' } });
  });

  it('holds everything back until the decode ends when partial execution is off, with the same result', async () => {
    const log: string[] = [];
    const { d } = dispatcher(false, log);
    d.callStart('c1', 'echo');
    d.piece('c1', line('a = 1\n', 1));
    await new Promise((r) => setTimeout(r, 20));
    d.piece('c1', line('b = 2\n', 2));
    d.callEnd('c1', { code: 'a = 1\nb = 2\n' });
    log.push('decode ended');
    d.endDecode();
    const [outcome] = await d.settle();
    expect(log).toEqual(['decode ended', 'start c1', 'piece a = 1', 'piece b = 2', 'end']);
    expect(outcome?.result).toEqual({ ok: true, content: 'a = 1\nb = 2\n' });
  });

  it('reports a reject verdict once and stops feeding that call', async () => {
    const log: string[] = [];
    const { d, rejects } = dispatcher(true, log, recordingTool(log, { rejectOn: 'boom' }));
    d.callStart('c1', 'echo');
    d.piece('c1', line('boom\n', 1));
    d.piece('c1', line('after\n', 2));
    d.callEnd('c1', {});
    const [outcome] = await d.settle();
    expect(rejects).toEqual(['bad line']);
    expect(log).not.toContain('piece after');
    // The call will not end, so its tool is told to let go of what it holds, and never ended.
    expect(log).toContain('abort rejected: bad line');
    expect(log).not.toContain('end');
    expect(outcome?.result.ok).toBe(false);
    expect(outcome?.result.content).toContain('bad line');
  });

  it('turns an unknown tool and a throwing tool into tool errors, not exceptions', async () => {
    const log: string[] = [];
    const throwing: ToolPlugin = { ...recordingTool(log), name: 'crash', start: () => ({ piece: () => undefined, end: async () => { throw new Error('kaput'); }, abort: () => {} }) };
    const d = new Dispatcher({
      tools: new Map([['crash', throwing]]),
      partialExecution: true,
      signal: new AbortController().signal,
      timeline: new Timeline('t'),
      round: 1,
      onProgress: () => {},
      onReject: () => {},
    });
    d.callStart('c1', 'nope');
    d.callEnd('c1', {});
    d.callStart('c2', 'crash');
    d.callEnd('c2', {});
    const outcomes = await d.settle();
    expect(outcomes.map((o) => o.result)).toEqual([
      { ok: false, content: 'error: unknown tool "nope"' },
      { ok: false, content: 'error: crash failed: kaput' },
    ]);
  });
});

describe('Dispatcher: a round cut short by a reject', () => {
  /** Two tools sharing one log: `echo` (lines, rejects "boom") and `calc` (the whole call). */
  function twoTools(partialExecution: boolean, log: string[]) {
    const calc: ToolPlugin = {
      name: 'calc',
      description: 'records its calls',
      parameters: { type: 'object' },
      consumes: 'call',
      start: ({ callId }) => {
        log.push(`start ${callId}`);
        return {
          piece: () => undefined,
          end: async (args) => {
            log.push(`end ${callId} ${JSON.stringify(args)}`);
            return { ok: true, content: 'ran' };
          },
          abort: (reason) => log.push(`abort ${callId}: ${reason}`),
        };
      },
    };
    return dispatcher(partialExecution, log, recordingTool(log, { rejectOn: 'boom' }), calc);
  }

  for (const partialExecution of [true, false]) {
    it(`never runs a call the model had not finished when the round was cut (partial execution ${partialExecution ? 'on' : 'off'})`, async () => {
      const log: string[] = [];
      const { d } = twoTools(partialExecution, log);
      // calc's arguments are half written when the decode stops (a reject of another call, or a
      // client call's failed validation): the parser never ends it.
      d.callStart('c1', 'calc');
      d.piece('c1', { kind: 'field', path: ['expression'], value: '2+2' });
      d.endDecode();
      const [outcome] = await d.settle();
      expect(log.filter((entry) => entry.startsWith('end'))).toEqual([]);
      expect(outcome).toMatchObject({ callId: 'c1', name: 'calc', args: { expression: '2+2' } });
      expect(outcome?.result).toEqual({ ok: false, content: 'error: calc was not run: the round was cut short before the model finished writing this call' });
      // With partial execution on it was open, and is told to let go; off, it never started.
      expect(log).toEqual(partialExecution ? ['start c1', 'abort c1: the round was cut short before the model finished writing this call'] : []);
    });
  }

  it('answers the rejected call with its rejection, and a finished sibling with its result', async () => {
    const log: string[] = [];
    const { d, rejects } = twoTools(true, log);
    d.callStart('c1', 'calc');
    d.callEnd('c1', { expression: '1+1' });
    d.callStart('c2', 'echo');
    d.piece('c2', line('boom\n', 1));
    await new Promise((r) => setTimeout(r, 20));
    const outcomes = await d.settle();
    expect(rejects).toEqual(['bad line']);
    expect(outcomes.map((o) => o.result)).toEqual([
      { ok: true, content: 'ran' },
      { ok: false, content: 'error: echo rejected the call: bad line' },
    ]);
  });

  it('dropAll (the request is failing): an open call is stopped, a buffered one never starts', async () => {
    for (const partialExecution of [true, false]) {
      const log: string[] = [];
      const { d } = twoTools(partialExecution, log);
      d.callStart('c1', 'calc');
      d.callEnd('c1', { expression: '1+1' });
      d.dropAll('the request failed');
      const [outcome] = await d.settle();
      expect(outcome?.result).toEqual({ ok: false, content: 'error: calc was not run: the request failed' });
      expect(log).toEqual(partialExecution ? ['start c1', 'abort c1: the request failed'] : []);
    }
  });
});

describe('Dispatcher and a piece hook that throws', () => {
  it('makes it the call\'s tool error at its end, aborts the tool, and leaves no unhandled rejection', async () => {
    const log: string[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const buggy: ToolPlugin = {
        ...recordingTool(log),
        start: () => ({
          piece: async () => {
            throw new Error('boom in onPiece');
          },
          end: async () => ({ ok: true, content: 'never' }),
          abort: (reason) => log.push(`abort ${reason}`),
        }),
      };
      const { d, rejects } = dispatcher(true, log, buggy);
      d.callStart('c1', 'echo');
      d.piece('c1', line('a\n', 1));
      d.piece('c1', line('b\n', 2));
      // The call's end comes later, as the decode goes on: the failure must wait for it unhandled by nobody.
      await new Promise((r) => setTimeout(r, 20));
      d.callEnd('c1', {});
      const [outcome] = await d.settle();
      expect(outcome?.result).toEqual({ ok: false, content: 'error: echo failed: boom in onPiece' });
      expect(log).toEqual(['abort failed: boom in onPiece']);
      expect(rejects).toEqual([]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('withPluginSchemas', () => {
  it('fills in a gateway tool listed by name and leaves client tools alone', async () => {
    const { withPluginSchemas } = await import('../../gateway/request-tools.ts');
    const log: string[] = [];
    const tool = recordingTool(log);
    const clientTool = { type: 'function', function: { name: 'mine', parameters: { type: 'object' } } };
    const out = withPluginSchemas(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: false, tools: [{ type: 'function', function: { name: 'echo' } }, clientTool] },
      new Map([[tool.name, tool]]),
    );
    expect(out.tools).toEqual([{ type: 'function', function: { name: 'echo', description: 'records lines', parameters: { type: 'object' } } }, clientTool]);
  });
});

describe('a tool that never stops emitting progress', () => {
  it('passes on at most its budget, then one note, and the call still ends with its result', async () => {
    const progress: ToolProgress[] = [];
    const timeline = new Timeline('test');
    const flooding: ToolPlugin = {
      name: 'flood',
      description: 'emits without end',
      parameters: { type: 'object' },
      consumes: 'call',
      start: ({ emit }) => ({
        piece: () => undefined,
        end: async () => {
          for (let i = 0; i < MAX_PROGRESS_EVENTS + 5_000; i++) emit({ type: 'unit-done', detail: `unit ${i}` });
          return { ok: true, content: 'done' };
        },
        abort: () => {},
      }),
    };
    const d = new Dispatcher({
      tools: new Map([['flood', flooding]]),
      partialExecution: true,
      signal: new AbortController().signal,
      timeline,
      round: 1,
      onProgress: (_call, p) => progress.push(p),
      onReject: () => {},
    });
    d.callStart('c1', 'flood');
    d.callEnd('c1', {});
    const [outcome] = await d.settle();
    expect(outcome!.result).toMatchObject({ ok: true, content: 'done' });
    expect(progress).toHaveLength(MAX_PROGRESS_EVENTS + 1);
    expect(progress.at(-1)).toMatchObject({ type: 'output', stream: 'stderr', text: expect.stringContaining('the rest is not shown') });
    // Marked on the timeline as many times; past its bound it counts them rather than keeping them.
    const kept = timeline.events.filter((e) => e.type === 'unit-done').length;
    expect(kept + (timeline.toJSON().events_not_kept ?? 0)).toBe(MAX_PROGRESS_EVENTS);
  });

  it('counts output text too: a megabyte of it, then the note', () => {
    const budget = new ProgressBudget();
    const chunk = { type: 'output' as const, stream: 'stdout' as const, text: 'x'.repeat(64 * 1024) };
    const passed = Array.from({ length: 20 }, () => budget.take(chunk));
    expect(passed.filter((p) => p === chunk)).toHaveLength(MAX_PROGRESS_TEXT / chunk.text.length);
    expect(passed[MAX_PROGRESS_TEXT / chunk.text.length]).toMatchObject({ stream: 'stderr' });
    expect(passed.slice(MAX_PROGRESS_TEXT / chunk.text.length + 1).every((p) => p === undefined)).toBe(true);
  });
});

/** A field tool: `send` (side effects: its end sends) or `check` (rejects the city "Paris"). */
function fieldTool(name: 'send' | 'check', log: string[]): ToolPlugin {
  return {
    name,
    description: name,
    parameters: { type: 'object' },
    consumes: 'field',
    sideEffects: name === 'send',
    start: ({ callId }) => ({
      piece: async (piece: Piece) => {
        await new Promise((r) => setTimeout(r, 1));
        return piece.kind === 'field' && piece.value === 'Paris' ? { verdict: 'reject', reason: 'no state in "Paris"' } : undefined;
      },
      end: async () => {
        log.push(`${name} ${callId} ended`);
        return { ok: true, content: name === 'send' ? 'sent' : 'checked' };
      },
      abort: (reason) => log.push(`${name} ${callId} aborted: ${reason}`),
    }),
  };
}

const field = (key: string, value: unknown): Piece => ({ kind: 'field', path: [key], value });

describe('Dispatcher: a side-effecting call beside a call that is rejected', () => {
  function round(partialExecution: boolean, rejectFailsRequest: boolean, city: string) {
    const log: string[] = [];
    const d = new Dispatcher({
      tools: new Map([fieldTool('send', log), fieldTool('check', log)].map((tool) => [tool.name, tool])),
      partialExecution,
      rejectFailsRequest,
      signal: new AbortController().signal,
      timeline: new Timeline('test'),
      round: 1,
      onProgress: () => {},
      onReject: (call) => log.push(`${call.callId} rejected`),
    });
    return {
      log,
      run: async () => {
        // The model writes a whole, valid send first, then a call that its tool rejects.
        d.callStart('s1', 'send');
        d.piece('s1', field('text', 'hello'));
        d.callEnd('s1', { text: 'hello' });
        await new Promise((r) => setTimeout(r, 20));
        d.callStart('c2', 'check');
        d.piece('c2', field('city', city));
        await new Promise((r) => setTimeout(r, 20));
        // With partial execution on the reject cut the decode inside this call; off, the model finished it.
        if (!partialExecution || city !== 'Paris') d.callEnd('c2', { city });
        log.push('decode ended');
        return d.settle();
      },
    };
  }

  it.each([true, false])('never sends when the reject fails the request (on_tool_reject "error"; partial execution %s)', async (partialExecution) => {
    const { log, run } = round(partialExecution, true, 'Paris');
    const [send, check] = await run();
    expect(log).not.toContain('send s1 ended');
    expect(log).toContain('c2 rejected');
    expect(send!.result).toEqual({ ok: false, content: 'error: send was not run: the request failed: check rejected a call' });
    expect(check!.result.content).toBe('error: check rejected the call: no state in "Paris"');
  });

  it('sends once the decode is over and no sibling rejected, when a reject would fail the request', async () => {
    const { log, run } = round(true, true, 'Paris, TX');
    const [send] = await run();
    expect(send!.result).toEqual({ ok: true, content: 'sent' });
    expect(log.indexOf('decode ended')).toBeLessThan(log.indexOf('send s1 ended'));
  });

  it('sends at once under on_tool_reject "reprompt", where the model reads both results', async () => {
    const { log, run } = round(true, false, 'Paris');
    const [send] = await run();
    expect(send!.result).toEqual({ ok: true, content: 'sent' });
    expect(log.indexOf('send s1 ended')).toBeLessThan(log.indexOf('decode ended'));
  });
});

describe('Dispatcher: every tool-start has one tool-end', () => {
  const started = (timeline: Timeline) =>
    new Dispatcher({ tools: new Map([['wait', untilAbortedTool]]), partialExecution: true, signal: new AbortController().signal, timeline, round: 1, onProgress: () => {}, onReject: () => {} });
  const toolEnds = (timeline: Timeline) => timeline.events.filter((e) => e.type === 'tool-end').map((e) => [e.callId, e.detail]);

  it('ends each running call at once as aborted when the request is over, whole or still being written, and never twice', async () => {
    const timeline = new Timeline('test');
    const d = started(timeline);
    d.callStart('c1', 'wait');
    d.callEnd('c1', {});
    d.callStart('c2', 'wait');
    d.abortAll('client aborted');
    expect(toolEnds(timeline)).toEqual([
      ['c1', 'aborted'],
      ['c2', 'aborted'],
    ]);
    // The tools' own ends (their errors) come later: not marked again.
    d.endDecode();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(toolEnds(timeline)).toEqual([
      ['c1', 'aborted'],
      ['c2', 'aborted'],
    ]);
  });

  it('ends a call the parser found malformed (or the token limit cut) as cancelled', () => {
    const timeline = new Timeline('test');
    const d = started(timeline);
    d.callStart('c1', 'wait');
    d.cancel('c1', 'truncated call');
    expect(toolEnds(timeline)).toEqual([['c1', 'cancelled']]);
  });
});

describe('Dispatcher: a request that is over', () => {
  it("never calls a tool's end hook once aborted, though the call's end was decoded before", async () => {
    const log: string[] = [];
    let verdict!: () => void;
    const mailer: ToolPlugin = {
      name: 'mail',
      description: 'sends a mail at its end, once its address is checked',
      parameters: { type: 'object' },
      consumes: 'field',
      start: () => ({
        piece: () => new Promise<undefined>((resolve) => (verdict = () => resolve(undefined))),
        end: async () => (log.push('sent'), { ok: true, content: 'sent' }),
        abort: (reason) => log.push(`abort ${reason}`),
      }),
    };
    const d = new Dispatcher({ tools: new Map([['mail', mailer]]), partialExecution: true, signal: new AbortController().signal, timeline: new Timeline('test'), round: 1, onProgress: () => {}, onReject: () => {} });
    d.callStart('m1', 'mail');
    d.piece('m1', { kind: 'field', path: ['to'], value: 'bob' });
    d.callEnd('m1', { to: 'bob' });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(verdict).toBeTypeOf('function');
    // The client leaves while the address check is still out; then the check answers.
    d.abortAll('client aborted');
    verdict();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(log).toEqual(['abort client aborted']);
  });
});

describe('Dispatcher: progress after a call has ended', () => {
  it('is dropped, whether the call answered or was stopped: no progress follows its tool-end', async () => {
    const emits: Array<(p: ToolProgress) => void> = [];
    const lingering: ToolPlugin = {
      name: 'linger',
      description: 'keeps a handle on emit past its end',
      parameters: { type: 'object' },
      consumes: 'call',
      start: ({ emit }) => {
        emits.push(emit);
        return { piece: () => undefined, end: async () => ({ ok: true, content: 'done' }), abort: () => {} };
      },
    };
    const timeline = new Timeline('test');
    const seen: string[] = [];
    const d = new Dispatcher({
      tools: new Map([['linger', lingering]]),
      partialExecution: true,
      signal: new AbortController().signal,
      timeline,
      round: 1,
      onProgress: (call, progress) => seen.push(`${call.callId} ${progress.type === 'unit-done' ? progress.detail : progress.text}`),
      onReject: () => {},
    });
    d.callStart('c1', 'linger');
    d.callEnd('c1', {});
    d.callStart('c2', 'linger');
    emits[0]!({ type: 'unit-done', detail: 'before its end' });
    await d.settle();
    emits[0]!({ type: 'unit-done', detail: 'after its result' });
    d.abortAll('the round failed');
    emits[1]!({ type: 'output', stream: 'stdout', text: 'after it was stopped' });
    expect(seen).toEqual(['c1 before its end']);
    const units = timeline.events.filter((e) => e.type === 'unit-done').map((e) => e.detail);
    expect(units).toEqual(['before its end']);
  });
});
