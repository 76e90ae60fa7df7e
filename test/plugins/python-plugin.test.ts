import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Piece } from '../../parsers/parser-events.ts';
import type { ToolProgress } from '../../plugins/plugin-types.ts';
import { createPythonPlugin } from '../../plugins/python/python-plugin.ts';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';

let sandbox: PythonSandbox;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ preImports: [] });
});

afterAll(async () => {
  await sandbox?.close();
});

const CODE = "import math\nfor r in (1, 2):\n    print(r, round(math.pi * r * r, 2))\nprint('done')";

function linePieces(code: string): Piece[] {
  const pieces: Piece[] = [];
  let start = 0;
  let lineNo = 1;
  for (let nl = code.indexOf('\n'); nl >= 0; nl = code.indexOf('\n', start)) {
    pieces.push({ kind: 'line', text: code.slice(start, nl + 1), lineNo: lineNo++ });
    start = nl + 1;
  }
  if (start < code.length) pieces.push({ kind: 'line', text: code.slice(start), lineNo });
  return pieces;
}

function context(signal = new AbortController().signal) {
  const events: ToolProgress[] = [];
  return { ctx: { callId: 'call_1', signal, emit: (e: ToolProgress) => events.push(e) }, events };
}

describe('python plugin', () => {
  it('declares a line-consuming tool with a code argument', () => {
    const plugin = createPythonPlugin(sandbox);
    expect(plugin.name).toBe('python');
    expect(plugin.consumes).toBe('line');
    expect(plugin.parameters).toEqual({
      type: 'object',
      properties: { code: { type: 'string', description: expect.any(String) } },
      required: ['code'],
    });
    expect(plugin.description.length).toBeGreaterThan(20);
  });

  it('runs each line as it arrives and reports units and output', async () => {
    const plugin = createPythonPlugin(sandbox);
    const { ctx, events } = context();
    const execution = plugin.start(ctx);
    for (const piece of linePieces(CODE)) expect(await execution.piece(piece)).toBeUndefined();
    const result = await execution.end({ code: CODE });
    expect(result).toMatchObject({ ok: true, content: '1 3.14\n2 12.57\ndone\n', data: { unitsRun: 3 } });
    expect(events.filter((e) => e.type === 'unit-done')).toEqual([
      { type: 'unit-done', detail: 'lines 1-1' },
      { type: 'unit-done', detail: 'lines 2-3' },
      { type: 'unit-done', detail: 'lines 4-4' },
    ]);
    expect(events.filter((e) => e.type === 'output').map((e) => (e.type === 'output' ? e.text : '')).join('')).toBe('1 3.14\n2 12.57\ndone\n');
  });

  it('feeds args.code itself when no pieces came, with the same result', async () => {
    const plugin = createPythonPlugin(sandbox);
    const streamed = plugin.start(context().ctx);
    for (const piece of linePieces(CODE)) await streamed.piece(piece);
    const withPieces = await streamed.end({ code: CODE });
    const withoutPieces = await plugin.start(context().ctx).end({ code: CODE });
    expect(withoutPieces.content).toBe(withPieces.content);
    expect(withoutPieces.ok).toBe(withPieces.ok);
  });

  it('turns an exception into a failed tool result with the traceback', async () => {
    const plugin = createPythonPlugin(sandbox);
    const result = await plugin.start(context().ctx).end({ code: "print('a')\nraise ValueError('bad input')\n" });
    expect(result.ok).toBe(false);
    expect(result.content).toBe(
      'a\nTraceback (most recent call last):\n  File "<llm-cell>", line 2, in <module>\n    raise ValueError(\'bad input\')\nValueError: bad input\n',
    );
    expect(result.data).toMatchObject({ error: { type: 'ValueError', lineno: 2, compileError: false } });
  });

  it('stops the cell when the request is aborted', async () => {
    const plugin = createPythonPlugin(sandbox);
    const controller = new AbortController();
    const { ctx, events } = context(controller.signal);
    const execution = plugin.start(ctx);
    await execution.piece({ kind: 'line', text: "print('started', flush=True)\n", lineNo: 1 });
    await execution.piece({ kind: 'line', text: 'import time\n', lineNo: 2 });
    await execution.piece({ kind: 'line', text: 'time.sleep(60)\n', lineNo: 3 });
    while (!events.some((e) => e.type === 'unit-done' && e.detail === 'lines 2-2')) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    // Aborted before onEnd began, the call ends without it (in every runtime): onAbort kills the cell.
    const result = await execution.end({ code: '' });
    expect(result).toMatchObject({ ok: false, content: 'error: python was aborted: request aborted', data: { code: 'aborted' } });
    // print() writes the text and its '\n' separately: under load they arrive as two events.
    expect(events.filter((e) => e.type === 'output').map((e) => (e.type === 'output' ? e.text : '')).join('')).toBe('started\n');
    while (sandbox.cellLoad().open > 0) await new Promise((r) => setTimeout(r, 5));
  });

  it('abort() is idempotent and ends the execution', async () => {
    const plugin = createPythonPlugin(sandbox);
    const execution = plugin.start(context().ctx);
    await execution.piece({ kind: 'line', text: 'while True:\n', lineNo: 1 });
    execution.abort('client went away');
    execution.abort('again');
    const result = await execution.end({ code: 'while True:\n    pass\n' });
    expect(result).toMatchObject({ ok: false, content: 'error: python was aborted: client went away' });
    while (sandbox.cellLoad().open > 0) await new Promise((r) => setTimeout(r, 5));
  });
});
