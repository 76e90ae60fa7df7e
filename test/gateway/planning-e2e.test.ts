import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import type { ToolPlugin, ToolResult } from '../../plugins/plugin-types.ts';
import { createSearchPlugin } from '../../plugins/search/search-plugin.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { getJson, postJson } from '../support/sse-client.ts';
import { samplePagesWithEveryWord } from './sample-pages-oracle.ts';
import { buildSampleSearchIndex } from '../support/sample-search-index.ts';

/** How long the first search waits for a second one before giving up (then the order assertions fail). */
const PAIR_WAIT_MS = 3000;

/**
 * The real search tool (FTS5 over the sample pages), instrumented: it logs when each search
 * starts and finishes, and holds each result until a second search has started. A local FTS
 * query takes a millisecond, far less than decoding the next plan line, so without the hold a
 * serial scheduler and a parallel one would log the same; with it, only a scheduler that starts
 * step 2 while step 1 is unfinished logs both starts before either finish (a serial one waits
 * PAIR_WAIT_MS and logs start, done, start).
 */
function pairedSearch(indexFile: string, log: string[]): ToolPlugin {
  const real = inlineTool(createSearchPlugin({ backend: 'sqlite', indexFile, maxResults: 1 }));
  let started = 0;
  let secondStarted: () => void = () => {};
  const second = new Promise<void>((resolve) => (secondStarted = resolve));
  return {
    ...real,
    start(ctx) {
      const execution = real.start(ctx);
      return {
        piece: (piece) => execution.piece(piece),
        abort: (reason) => execution.abort(reason),
        async end(args): Promise<ToolResult> {
          log.push(`start ${String(args['query'])}`);
          if (++started === 2) secondStarted();
          const result = await execution.end(args);
          await Promise.race([second, new Promise((resolve) => setTimeout(resolve, PAIR_WAIT_MS))]);
          log.push(`done ${String(args['query'])}`);
          return result;
        },
      };
    },
  };
}

describe('Planning over real HTTP: an LLMCompiler plan whose steps run while it is decoded', () => {
  let dir: string;
  let conveyor: ConveyorHandle;
  const log: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'conveyor-planning-e2e-'));
    const index = await buildSampleSearchIndex(dir);
    conveyor = await startTestConveyor({ plugins: { search: false }, tools: [pairedSearch(index, log)] });
  });

  afterAll(async () => {
    await conveyor?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs both searches concurrently before the plan is decoded, then adds their page counts', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', {
      model: SIM_MODEL,
      scenario: 'planning',
      tool_parser: 'llmcompiler-plan',
      messages: [{ role: 'user', content: 'How many hello-world pages are there for Python and for Java together?' }],
    });
    expect(res.status).toBe(200);

    // Both searches started before either finished.
    expect(log).toEqual(['start hello world Python', 'start hello world Java', expect.stringMatching(/^done /), expect.stringMatching(/^done /)]);

    const [assistant, tool] = res.json.conveyor.messages as Array<{ role: string; content: string; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> }>;
    const call = assistant!.tool_calls![0]!;
    expect(call.function.name).toBe('plan');
    expect(JSON.parse(call.function.arguments).steps.map((s: { tool: string }) => s.tool)).toEqual(['search', 'search', 'calculator', 'format', 'join']);

    // The calculator step got the two counts ($1, $2 = each search's data.value), not their texts.
    const python = samplePagesWithEveryWord(['hello', 'world', 'Python']).length;
    const java = samplePagesWithEveryWord(['hello', 'world', 'Java']).length;
    expect(tool!.content).toContain(`${python} ${python === 1 ? 'page contains' : 'pages contain'} every word of "hello world Python".`);
    expect(tool!.content).toContain(`${java} ${java === 1 ? 'page contains' : 'pages contain'} every word of "hello world Java".`);
    expect(tool!.content).toContain(`Step 3: calculator("$1 + $2")\nObservation: ${python + java}\n`);
    // The format step got the sum ($3) and wrote the sentence the joiner round answers with.
    const sentence = `Python and Java have ${python + java} hello-world pages together.`;
    expect(tool!.content).toMatch(new RegExp(`Step 4: format\\(.*\\)\\nObservation: ${sentence.replace(/[.]/g, '\\.')}$`));
    const answer = res.json.choices[0].message.content as string;
    expect(answer.endsWith(sentence)).toBe(true);
    expect(res.json.conveyor.rounds).toBe(2);

    // In the timeline: steps 1 and 2 are dispatched, and both finish, before the plan's last line is decoded.
    const timeline = await getJson(conveyor.gateway.url, `/v1/requests/${res.headers.get('x-conveyor-request-id')}/timeline`);
    const events = timeline.json.events as TimelineEvent[];
    const at = (type: string, detail?: string) => events.findIndex((e) => e.type === type && e.round === 1 && e.callId === call.id && (detail === undefined || e.detail === detail));
    const planEnd = at('call-end');
    expect(planEnd).toBeGreaterThan(0);
    expect(at('piece', 'step 1')).toBeLessThan(at('piece', 'step 2'));
    expect(at('piece', 'step 2')).toBeLessThan(at('unit-done', 'step 1 search: ok'));
    expect(at('piece', 'step 2')).toBeLessThan(at('unit-done', 'step 2 search: ok'));
    expect(at('unit-done', 'step 1 search: ok')).toBeLessThan(planEnd);
    expect(at('unit-done', 'step 2 search: ok')).toBeLessThan(planEnd);
    expect(at('piece', 'step 4')).toBeLessThan(planEnd);
    expect(at('unit-done', 'step 3 calculator: ok')).toBeGreaterThan(at('piece', 'step 3'));
    expect(at('unit-done', 'step 4 format: ok')).toBeGreaterThan(at('unit-done', 'step 3 calculator: ok'));
  });
});
