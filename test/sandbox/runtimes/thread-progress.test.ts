import { afterAll, describe, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import { MODEL } from '../../llm-client/fixtures/vllm-streams.ts';
import { streamChat } from '../../support/sse-client.ts';
import { callThenAnswer, scriptedGateway, toolMap } from '../../support/scripted-gateway.ts';
import badProgress from './fixtures/bad-progress-plugin.ts';
import { fixture } from './runtime-test-helpers.ts';

const gateway = scriptedGateway();
const pools = createRuntimePools({ thread: { maxThreads: 1 } });

afterAll(async () => {
  await pools.close();
});

describe('thread runtime: progress from the worker', () => {
  // Progress of no known shape was dropped without a word (review 8, finding 3): now, as in every
  // runtime, the first one fails the call naming its missing field. It never reaches the client.
  it('passes on no progress of unknown shape: the call fails naming the field, its request and the gateway go on', async () => {
    const tool = toolFromPlugin(badProgress, { moduleUrl: fixture('bad-progress-plugin.ts'), pools });
    const { url } = await gateway.start(callThenAnswer({ name: 'bad_progress', arguments: {} }, (observation) => `got ${observation}`), { tools: toolMap(tool) });
    const chat = await streamChat(url, { model: MODEL, messages: [{ role: 'user', content: 'go' }] });
    expect(chat.status).toBe(200);
    expect(chat.events.filter((e) => e.type === 'tool_call.output')).toEqual([expect.objectContaining({ name: 'bad_progress', stream: 'stdout', text: 'fine\n' })]);
    const error = "error: bad_progress's ctx.emit({ type: 'output' }) needs stream 'stdout' or 'stderr' (got undefined); ctx.emit takes { type: 'unit-done', detail } or { type: 'output', stream: 'stdout' | 'stderr', text } (strings)";
    expect(chat.events.find((e) => e.type === 'tool_call.completed')).toMatchObject({ name: 'bad_progress', ok: false, content: error });
    expect(chat.content).toBe(`got ${error}`);
    expect(chat.done).toBe(true);
  });
});
