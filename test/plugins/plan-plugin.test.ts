import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLlmCompilerPlanParser } from '../../parsers/formats/llmcompiler-plan-parser.ts';
import calculator from '../../plugins/calculator/calculator-plugin.ts';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { createPlanTool } from '../../plugins/plan/plan-plugin.ts';
import type { ToolPlugin, ToolProgress } from '../../plugins/plugin-types.ts';
import { createSearchPlugin } from '../../plugins/search/search-plugin.ts';
import { samplePagesWithEveryWord } from '../gateway/sample-pages-oracle.ts';
import { suiteTempDir } from '../support/temp-dir.ts';
import { buildSampleSearchIndex } from '../support/sample-search-index.ts';
import { parsePlan } from '../support/plan-runs.ts';

/** A tool that logs when it starts and finishes and waits for the test to let it finish. */
function gatedTool(name: string, log: string[]) {
  const gates = new Map<string, () => void>();
  const tool = inlineTool(
    definePlugin({
      name,
      description: 'test tool',
      parameters: z.object({ query: z.string(), extra: z.string().optional() }),
      consumes: 'call',
      hooks: {
        async onEnd({ query }, ctx) {
          log.push(`start ${query}`);
          await new Promise<void>((resolve) => gates.set(query, resolve));
          ctx.signal.throwIfAborted();
          log.push(`done ${query}`);
          return `result(${query})`;
        },
        onAbort: (reason) => void log.push(`abort: ${reason}`),
      },
    }),
  );
  const release = (query: string) => gates.get(query)?.();
  return { tool, release, started: (query: string) => gates.has(query) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('plan plugin: dispatch order', () => {
  it('starts independent steps at once, in parallel, and a dependent step when its inputs are ready', async () => {
    const log: string[] = [];
    const lookup = gatedTool('lookup', log);
    const plan = inlineTool(createPlanTool({ tools: new Map([['lookup', lookup.tool]]) }));
    const progress: ToolProgress[] = [];
    const execution = plan.start({ callId: 'call_1', signal: new AbortController().signal, emit: (p) => progress.push(p) });
    const { pieces, args } = parsePlan('1. lookup("a")\n2. lookup("b")\n3. lookup("$1 and ${2}")\n4. join()\n');

    expect(await execution.piece(pieces[0]!)).toBeUndefined();
    expect(await execution.piece(pieces[1]!)).toBeUndefined();
    await tick();
    // Steps 1 and 2 both run before step 3's line has even arrived.
    expect(log).toEqual(['start a', 'start b']);
    expect(await execution.piece(pieces[2]!)).toBeUndefined();
    expect(await execution.piece(pieces[3]!)).toBeUndefined();
    await tick();
    expect(log).toEqual(['start a', 'start b']); // step 3 waits for $1 and $2
    lookup.release('b');
    await tick();
    expect(log).toEqual(['start a', 'start b', 'done b']);
    lookup.release('a');
    await tick();
    expect(log).toEqual(['start a', 'start b', 'done b', 'done a', 'start result(a) and result(b)']);
    const ending = execution.end(args);
    lookup.release('result(a) and result(b)');
    const result = await ending;
    expect(result.ok).toBe(true);
    expect(result.content).toBe(
      [
        'Step 1: lookup("a")',
        'Observation: result(a)',
        'Step 2: lookup("b")',
        'Observation: result(b)',
        'Step 3: lookup("$1 and ${2}")',
        'Observation: result(result(a) and result(b))',
      ].join('\n'),
    );
    // Quoted back by the model in its answer, the transcript is prose to the plan parser, not a new plan.
    const reparser = createLlmCompilerPlanParser();
    expect([...reparser.push(`${result.content}\n`), ...reparser.end()].filter((e) => e.type !== 'text')).toEqual([]);
    expect(progress).toEqual([
      { type: 'unit-done', detail: 'step 2 lookup: ok' },
      { type: 'unit-done', detail: 'step 1 lookup: ok' },
      { type: 'unit-done', detail: 'step 3 lookup: ok' },
    ]);
  });

  it('aborts the running steps when the plan is aborted', async () => {
    const log: string[] = [];
    const lookup = gatedTool('lookup', log);
    const controller = new AbortController();
    const plan = inlineTool(createPlanTool({ tools: new Map([['lookup', lookup.tool]]) }));
    const execution = plan.start({ callId: 'call_1', signal: controller.signal, emit: () => {} });
    await execution.piece(parsePlan('1. lookup("a")\n2. join()\n').pieces[0]!);
    await tick();
    controller.abort();
    expect(log).toEqual(['start a', 'abort: request aborted']);
  });
});

describe('plan plugin: what $n stands for', () => {
  /** Answers with a text for the model and, when given, a `data.value` for later steps. */
  const answering = (name: string, data?: Record<string, unknown>) =>
    inlineTool(
      definePlugin({
        name,
        description: 'test tool',
        parameters: z.object({ text: z.string() }),
        consumes: 'call',
        hooks: { onEnd: ({ text }) => ({ ok: true, content: `${name} read: ${text}`, ...(data ? { data } : {}) }) },
      }),
    );
  const echo = inlineTool(definePlugin({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), consumes: 'call', hooks: { onEnd: ({ text }) => text } }));

  it('is the step result\'s scalar data.value when it has one, else its observation text', async () => {
    const tools = new Map<string, ToolPlugin>([
      ['count', answering('count', { value: 7 })],
      ['word', answering('word', { value: 'yes' })],
      ['list', answering('list', { value: [1, 2] })],
      ['plain', answering('plain')],
      ['echo', echo],
    ]);
    const { pieces, args } = parsePlan(
      ['1. count("a")', '2. word("b")', '3. list("c")', '4. plain("d")', '5. echo("$1 + ${1}, $2, $3, $4")', '6. join()'].join('\n'),
    );
    const run = await runScriptedCall(inlineTool(createPlanTool({ tools })), { pieces, args });
    const steps = run.result?.data?.['steps'] as Array<{ content: string; value?: string }>;
    expect(steps[4]?.content).toBe('7 + 7, yes, list read: c, plain read: d');
    // data.steps carries the value each step handed on; the transcript shows what the model reads.
    expect(steps.map((s) => s.value)).toEqual(['7', 'yes', undefined, undefined, undefined]);
    expect(run.result?.content).toContain('Step 1: count("a")\nObservation: count read: a\n');
  });
});

describe('plan plugin: a step it cannot run', () => {
  it('fails that step, without an unhandled rejection, while the model is still writing the plan', async () => {
    const echo = inlineTool(definePlugin({ name: 'echo', description: 'echo', parameters: z.object({ text: z.unknown() }), consumes: 'call', hooks: { onEnd: () => 'echoed' } }));
    const plan = inlineTool(createPlanTool({ tools: new Map<string, ToolPlugin>([['echo', echo]]) }));
    // Arguments nested deeper than substituting `$n` into them can recurse (a RangeError on any stack).
    let deep: unknown = 'x';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const steps = [
      { index: 1, tool: 'echo', args: [deep], raw: '1. echo([[…]])' },
      { index: 2, tool: 'join', args: [], raw: '2. join()' },
    ];
    const progress: ToolProgress[] = [];
    const execution = plan.start({ callId: 'call_plan', signal: new AbortController().signal, emit: (p) => progress.push(p) });
    await execution.piece({ kind: 'step', ...steps[0]! });
    // The step has run and failed before the plan's end is read: a rejection left unhandled here
    // would end the process (vitest fails the run on one).
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(progress).toContainEqual({ type: 'unit-done', detail: 'step 1 echo: failed' });
    await execution.piece({ kind: 'step', ...steps[1]! });
    const result = await execution.end({ steps });
    expect(result.ok).toBe(false);
    expect(result.content).toMatch(/Observation: error: echo failed: Maximum call stack size exceeded/);
  });
});

describe('plan plugin: invalid plans', () => {
  const echo = inlineTool(definePlugin({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), consumes: 'call', hooks: { onEnd: ({ text }) => text } }));
  const fail = inlineTool(definePlugin({ name: 'fail', description: 'fails', parameters: z.object({ text: z.string() }), consumes: 'call', hooks: { onEnd: () => ({ ok: false, content: 'error: boom' }) } }));
  const tools = new Map<string, ToolPlugin>([['echo', echo], ['fail', fail]]);
  const run = (text: string, streamed = true) => {
    const { pieces, args } = parsePlan(text);
    return runScriptedCall(inlineTool(createPlanTool({ tools })), { pieces: streamed ? pieces : [], args });
  };

  it('rejects a step naming an unknown tool at that step', async () => {
    const result = await run('1. echo("a")\n2. browse("x")\n3. echo("b")\n4. join()\n');
    expect(result.verdicts).toEqual([undefined, { verdict: 'reject', reason: 'step 2: unknown tool "browse"' }]);
  });

  it('rejects a reference to a step the plan does not have, too many arguments, and a nested plan', async () => {
    expect((await run('1. echo("a")\n3. echo("$2")\n4. join()\n')).rejected).toBe('step 3 refers to $2, which is not a step of this plan');
    expect((await run('1. echo("a", "b")\n2. join()\n')).rejected).toBe('step 1: echo takes 1 argument(s) (text), got 2');
    // Named as what it is, not as a tool that does not exist (the model sees `plan` among its tools).
    expect((await run('1. plan("a")\n2. join()\n')).rejected).toBe("step 1: plans cannot nest; write the inner plan's steps into this plan");
  });

  it('leaves a $n that is not an earlier step as written: a dollar amount reaches the tool unchanged', async () => {
    const { pieces, args } = parsePlan('1. echo("a")\n2. echo("under $500, not $2 or $0")\n3. join()\n');
    const result = (await runScriptedCall(inlineTool(createPlanTool({ tools })), { pieces, args })).result;
    expect(result?.ok).toBe(true);
    expect((result?.data?.['steps'] as Array<{ content: string }>)[1]?.content).toContain('under $500, not $2 or $0');
  });

  it('substitutes $n inside an object argument too', async () => {
    const keys = inlineTool(definePlugin({ name: 'keys', description: 'k', parameters: z.object({ map: z.record(z.string(), z.string()) }), consumes: 'call', hooks: { onEnd: ({ map }) => JSON.stringify(map) } }));
    const { pieces, args } = parsePlan('1. echo("a")\n2. keys({"k": "$1!"})\n3. join()\n');
    const result = (await runScriptedCall(inlineTool(createPlanTool({ tools: new Map([...tools, ['keys', keys]]) })), { pieces, args })).result;
    expect((result?.data?.['steps'] as Array<{ content: string }>)[1]?.content).toBe('{"k":"a!"}');
  });

  it('reports the same problems as a tool error when the plan arrives whole', async () => {
    expect((await run('1. echo("a")\n2. browse("x")\n3. join()\n', false)).result).toEqual({ ok: false, content: 'error: step 2: unknown tool "browse"' });
  });

  it('skips the steps that depend on a failed step, and runs the others', async () => {
    const result = (await run('1. fail("x")\n2. echo("after $1")\n3. echo("independent")\n4. join()\n')).result;
    expect(result?.ok).toBe(false);
    expect(result?.data?.['steps']).toEqual([
      { index: 1, tool: 'fail', ok: false, content: 'error: boom' },
      { index: 2, tool: 'echo', ok: false, content: 'error: skipped because step 1 failed' },
      { index: 3, tool: 'echo', ok: true, content: 'independent' },
    ]);
  });
});

describe('plan plugin over the built-in tools', () => {
  const dir = suiteTempDir('conveyor-plan-');
  let indexFile: string;

  beforeAll(async () => {
    indexFile = await buildSampleSearchIndex(dir);
  });

  it('searches twice in parallel, computes, and substitutes a result into a later step', async () => {
    const registry = new Map<string, ToolPlugin>([
      ['search', inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile, maxResults: 1 }))],
      ['calculator', inlineTool(calculator)],
    ]);
    registry.set('plan', inlineTool(createPlanTool({ tools: (name) => registry.get(name) })));
    const { pieces, args } = parsePlan(
      [
        'Thought: look both up, then do the sum.',
        '1. search("hello world in Python")',
        '2. search("hello world in Java")',
        '3. calculator("200*701")',
        '4. calculator("$3 + 1")',
        '5. join()<END_OF_PLAN>',
      ].join('\n'),
    );
    const run = await runScriptedCall(registry.get('plan')!, { pieces, args });
    expect(run.result?.ok).toBe(true);
    const steps = run.result?.data?.['steps'] as Array<{ content: string }>;
    expect(steps[0]?.content).toMatch(/^1\. Hello, World! in Python\n/);
    expect(steps[1]?.content).toMatch(/^1\. Hello, World! in Java\n/);
    expect(steps.slice(2).map((s) => s.content)).toEqual(['140200', '140201']);
  });

  it('adds up two search counts: $n is the count of matching pages, not the result list', async () => {
    const registry = new Map<string, ToolPlugin>([
      ['search', inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile, maxResults: 1 }))],
      ['calculator', inlineTool(calculator)],
    ]);
    registry.set('plan', inlineTool(createPlanTool({ tools: (name) => registry.get(name) })));
    const { pieces, args } = parsePlan(
      ['1. search("hello world Python")', '2. search("hello world Java")', '3. calculator("$1 + $2")', '4. join()<END_OF_PLAN>'].join('\n'),
    );
    const run = await runScriptedCall(registry.get('plan')!, { pieces, args });
    const python = samplePagesWithEveryWord(['hello', 'world', 'Python']).length;
    const java = samplePagesWithEveryWord(['hello', 'world', 'Java']).length;
    expect(run.result?.ok).toBe(true);
    const steps = run.result?.data?.['steps'] as Array<{ content: string; value?: string }>;
    expect(steps.map((s) => s.value)).toEqual([String(python), String(java), String(python + java)]);
    expect(steps[2]?.content).toBe(String(python + java));
  });
});
