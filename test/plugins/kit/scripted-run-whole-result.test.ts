import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin, inlineTool, runScriptedCall } from '../../../plugins/kit/index.ts';
import { scriptedGateway, callThenAnswer, toolMap } from '../../support/scripted-gateway.ts';
import { postJson } from '../../support/sse-client.ts';
import { MODEL } from '../../llm-client/fixtures/vllm-streams.ts';

// ScriptedRun's doc called `result` "what the model would read", but it is onEnd's whole result:
// the gateway cuts `content` past maxObservationChars (20,000 by default) before the model reads
// it, so a test asserting the end of a long observation passed while the model never saw that
// end whole. The doc now says the result is whole and where it is cut.
const scripted = scriptedGateway();
const long = definePlugin({
  name: 'long', description: 'Writes a long report', parameters: z.object({}), consumes: 'call',
  hooks: { onEnd: () => `${'x'.repeat(30_000)} SUMMARY` },
});

it("gives onEnd's whole result, which the gateway cuts for the model, as ScriptedRun's doc says", async () => {
  const run = await runScriptedCall(inlineTool(long), { args: {} });
  expect(run.result?.content).toHaveLength(30_008);
  let observed = '';
  const gw = await scripted.start(callThenAnswer({ name: 'long', arguments: {} }, (observation) => ((observed = observation), 'ok')), { tools: toolMap(inlineTool(long)) });
  await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'report' }] });
  expect(observed.length).toBeLessThanOrEqual(20_000);
  const doc = readFileSync(new URL('../../../plugins/kit/testing.ts', import.meta.url), 'utf8').replace(/\s*\n\s*\*\s*/g, ' ');
  expect(doc.includes('whole: the gateway cuts its `content` to maxObservationChars'), 'ScriptedRun says result is whole').toBe(true);
});
