import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import format from '../../plugins/format/format-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { createPlanTool } from '../../plugins/plan/plan-plugin.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

// Regression (review 4, finding 2): this plan answered HTTP 500 "internal server error". Its step's
// literal, 20,000 lists deep, reached the next round's assistant turn, whose JSON.stringify of the
// plan's arguments overflowed the stack (gateway/round-messages.ts).

const scripted = scriptedGateway();
const DEPTH = 20_000;
const PLAN = `1. format("x {}", ${'['.repeat(DEPTH)}1${']'.repeat(DEPTH)})\n2. join()\n`;

function reply(res: ServerResponse, content: string): void {
  sseHeaders(res);
  res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
}

describe('a plan step whose literal nests 20,000 deep', () => {
  it('is refused by the plan with a reason the model reads, and the request answers', async () => {
    const tools = new Map<string, ToolPlugin>([['format', inlineTool(format)]]);
    tools.set('plan', inlineTool(createPlanTool({ tools: (name) => tools.get(name) })));
    const gw = await scripted.start(
      (_req, res, body) => {
        const observation = (body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool');
        reply(res, observation ? `heard: ${observation.content}` : PLAN);
      },
      { tools },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, tool_parser: 'llmcompiler-plan', messages: [{ role: 'user', content: 'go' }] });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toContain('step 1: an argument nests lists, tuples or dicts deeper than 256 levels');
  });
});
