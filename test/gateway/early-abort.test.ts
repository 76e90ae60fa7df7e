import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { definePlugin, reject } from '../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { encodeText } from '../../sim/mistral-tokenizer.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { E2E_PROFILE, SIM_MODEL } from '../support/e2e-profile.ts';
import { eventually } from '../support/conveyor-fixture.ts';
import { getJson, postJson } from '../support/sse-client.ts';

const CITY_ST = /^[^,]+, [A-Z]{2}$/;

/** The paper's Validation workload: a local-news call whose location lacks the state. */
const localNews = definePlugin({
  name: 'local_news',
  description: 'Local news for a US location',
  parameters: z.object({ location: z.string().regex(CITY_ST, 'location must be "City, ST"'), topic: z.string() }),
  consumes: 'field',
  hooks: {
    onPiece: (piece) =>
      piece.kind === 'field' && piece.path[0] === 'location' && !CITY_ST.test(String(piece.value))
        ? reject(`location must be "City, ST", got "${String(piece.value)}"`)
        : undefined,
    onEnd: ({ location, topic }) => `3 stories about ${topic} in ${location}`,
  },
});

const PREFIX = '<tool_call>{"name": "local_news", "arguments": {"location": "Springfield"';
const CALL = `${PREFIX}, "topic": "${'the annual county fair and its many attractions '.repeat(12).trim()}"}}</tool_call>`;

describe('early abort: a tool rejects a call while it is still being decoded', () => {
  let sim: SimHandle;
  let gateway: GatewayHandle;
  let clientSide: GatewayHandle;
  beforeAll(async () => {
    sim = await startSim({
      profile: E2E_PROFILE,
      scenarios: [
        {
          name: 'validation',
          rules: [
            { when: { explicit: true, lastRole: 'user' }, reply: CALL },
            { when: { explicit: true, lastRole: 'tool' }, reply: 'Which state is Springfield in? The tool said: {{tool_output}}' },
          ],
        },
      ],
    });
    gateway = await startGateway(
      { port: 0, upstream: { baseUrl: sim.url }, toolParsers: [{ model: '.', format: 'hermes', reasoning: false }] },
      { tools: new Map([['local_news', inlineTool(localNews)]]) },
    );
    clientSide = await startGateway({ port: 0, upstream: { baseUrl: sim.url }, toolParsers: [{ model: '.', format: 'hermes', reasoning: false }] }, { tools: new Map() });
  });
  afterAll(async () => {
    await clientSide?.close();
    await gateway?.close();
    await sim?.close();
  });

  const body = { model: SIM_MODEL, scenario: 'validation', messages: [{ role: 'user', content: 'News for Springfield?' }] };

  it('cancels the upstream decode within a token of the bad field and re-prompts with the reason', async () => {
    const before = sim.counters();
    const res = await postJson(gateway.url, '/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toContain('Which state is Springfield in?');
    expect(res.json.choices[0].message.content).toContain('location must be');

    await eventually(() => sim.counters().abortedSequences === before.abortedSequences + 1, 'one aborted sequence');

    const timeline = await getJson(gateway.url, `/v1/requests/${res.headers.get('x-conveyor-request-id')}/timeline`);
    const events = timeline.json.events as TimelineEvent[];
    const abort = events.findIndex((e) => e.type === 'abort' && e.detail?.startsWith('rejected'));
    expect(abort).toBeGreaterThan(0);
    expect(events.findIndex((e) => e.type === 'decode-end' && e.round === 1)).toBeGreaterThan(abort);
    expect(events[events.findIndex((e) => e.type === 'decode-end' && e.round === 1)]!.detail).toBe('tool_rejected');
  });

  it('fails the request with tool_rejected when asked to, having decoded barely past the bad field', async () => {
    const before = sim.counters();
    const res = await postJson(gateway.url, '/v1/chat/completions', { ...body, on_tool_reject: 'error' });
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe('tool_rejected');
    expect(res.json.error.message).toContain('City, ST');

    // The sim saw the sequence leave its batch long before the call's last token: the string
    // closes at its quote, the reject reaches the upstream as a closed socket, and at most a step
    // or two already in flight complete.
    await eventually(() => sim.counters().abortedSequences === before.abortedSequences + 1, 'one aborted sequence');
    const generated = sim.counters().tokensGenerated - before.tokensGenerated;
    expect(generated).toBeLessThanOrEqual(encodeText(`${PREFIX}`).length + 3);
    expect(generated).toBeLessThan(encodeText(CALL).length / 3);
  });

  describe('for a tool the client executes itself', () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'local_news',
          parameters: { type: 'object', properties: { location: { type: 'string', pattern: '^[^,]+, [A-Z]{2}$' }, topic: { type: 'string' } } },
        },
      },
    ];

    it('streams the call back untouched by default', async () => {
      const res = await postJson(clientSide.url, '/v1/chat/completions', { ...body, tools });
      expect(res.json.choices[0].finish_reason).toBe('tool_calls');
      expect(JSON.parse(res.json.choices[0].message.tool_calls[0].function.arguments).location).toBe('Springfield');
    });

    it('checks its arguments against the JSON Schema while they stream when asked, and re-prompts', async () => {
      const before = sim.counters();
      const res = await postJson(clientSide.url, '/v1/chat/completions', { ...body, tools, validate_tool_arguments: true });
      expect(res.status).toBe(200);
      expect(res.json.choices[0].finish_reason).toBe('stop');
      expect(res.json.choices[0].message.content).toContain('Which state is Springfield in?');
      expect(res.json.choices[0].message.content).toContain('argument "location" of local_news');
      // The history shows what the model wrote, next to the reason, as for a gateway tool's reject.
      const [call] = res.json.conveyor.messages[0].tool_calls;
      expect(JSON.parse(call.function.arguments)).toEqual({ location: 'Springfield' });
      await eventually(() => sim.counters().abortedSequences === before.abortedSequences + 1, 'one aborted sequence');
    });

    const asked = (parameters: Record<string, unknown>) =>
      postJson(clientSide.url, '/v1/chat/completions', { ...body, tools: [{ type: 'function', function: { name: 'local_news', parameters } }], validate_tool_arguments: true });

    it('refuses an argument the schema does not declare, under additionalProperties: false, as it closes', async () => {
      const before = sim.counters();
      const res = await asked({ type: 'object', properties: { topic: { type: 'string' } }, additionalProperties: false });
      expect(res.json.choices[0].finish_reason).toBe('stop');
      expect(res.json.choices[0].message.content).toContain('argument "location" of local_news: not one the schema declares');
      await eventually(() => sim.counters().abortedSequences === before.abortedSequences + 1, 'the decode was cut at the field');
    });

    it('refuses a call that ends without a required argument, and passes one that has them all', async () => {
      const properties = { location: { type: 'string' }, topic: { type: 'string' } };
      const missing = await asked({ type: 'object', properties, required: ['location', 'topic', 'date', 'constructor'] });
      expect(missing.json.choices[0].finish_reason).toBe('stop');
      expect(missing.json.choices[0].message.content).toContain('local_news is missing its required arguments "date", "constructor"');
      const complete = await asked({ type: 'object', properties, required: ['location', 'topic'] });
      expect(complete.json.choices[0].finish_reason).toBe('tool_calls');
      expect(JSON.parse(complete.json.choices[0].message.tool_calls[0].function.arguments)).toMatchObject({ location: 'Springfield' });
    });
  });
});
