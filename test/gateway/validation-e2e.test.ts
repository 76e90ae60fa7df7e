import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { encodeText } from '../../sim/mistral-tokenizer.ts';
import { eventually, SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';

/** The shipped scenario's first reply: the call whose `"location": "Paris"` is invalid. */
const scenario = JSON.parse(readFileSync(new URL('../../sim/scenarios/validation.json', import.meta.url), 'utf8')) as { rules: Array<{ reply: string }> };
const INVALID_CALL = scenario.rules[0]!.reply;
const THROUGH_BAD_FIELD = INVALID_CALL.slice(0, INVALID_CALL.indexOf('"Paris"') + '"Paris"'.length);

const body = { model: SIM_MODEL, scenario: 'validation', messages: [{ role: 'user', content: 'What is the local news in Paris?' }] };

interface Message {
  role: string;
  content: string;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

describe('Validation over real HTTP: an invalid argument rejected while it is decoded', () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor({ plugins: { python: false, search: false, database: false, plan: false, calculator: false, http_get: false } });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  const sim = () => conveyor.sim!.counters();
  const settled = (before: ReturnType<typeof sim>) =>
    eventually(() => sim().abortedSequences === before.abortedSequences + 1 && sim().running === 0, 'the rejected decode was aborted and nothing runs');

  it('rejects "Paris" at the location field, aborts the decode, and the re-prompted round succeeds', async () => {
    expect(INVALID_CALL.length).toBeGreaterThan(THROUGH_BAD_FIELD.length * 2); // the rest of the call is long
    const before = sim();
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(res.json.conveyor.rounds).toBe(3);

    // What the model saw after the rejection: the reason as the rejected call's tool message.
    const [first, rejection, second, valid] = res.json.conveyor.messages as Message[];
    const rejectedId = first!.tool_calls![0]!.id;
    expect(first!.tool_calls![0]!.function.name).toBe('local_news');
    // The history shows what the model wrote before the cut, not an empty call.
    expect(JSON.parse(first!.tool_calls![0]!.function.arguments)).toEqual({ location: 'Paris' });
    expect(rejection).toMatchObject({ role: 'tool', tool_call_id: rejectedId });
    expect(rejection!.content).toBe('error: local_news rejected the call: location: must be "City, ST" (e.g. "Austin, TX"), got "Paris"');
    expect(second!.content).toContain('The location needs a US state code');
    const validCall = second!.tool_calls![0]!;
    expect(JSON.parse(validCall.function.arguments)).toMatchObject({ location: 'Paris, TX' });
    expect(valid).toMatchObject({ role: 'tool', tool_call_id: validCall.id });
    expect(JSON.parse(valid!.content)).toEqual(JSON.parse(validCall.function.arguments)); // validated, handed back
    expect(res.json.choices[0].message.content).toContain(`Here is the local news request for Paris, TX:\n\n${valid!.content}`);

    await settled(before);

    const timeline = await getJson(conveyor.gateway.url, `/v1/requests/${res.headers.get('x-conveyor-request-id')}/timeline`);
    const events = timeline.json.events as TimelineEvent[];
    const at = (type: string, round: number, callId?: string) => events.findIndex((e) => e.type === type && e.round === round && (callId === undefined || e.callId === callId));
    const field = events.findIndex((e) => e.type === 'piece' && e.callId === rejectedId && e.detail === 'field location');
    const rejected = events.findIndex((e) => e.type === 'abort' && e.callId === rejectedId && e.detail?.startsWith('rejected: location'));
    expect(field).toBeGreaterThan(at('call-start', 1, rejectedId));
    expect(rejected).toBeGreaterThan(field);
    expect(at('call-end', 1, rejectedId)).toBe(-1); // the call was never finished
    expect(rejected).toBeLessThan(at('decode-end', 1));
    expect(events[at('decode-end', 1)]!.detail).toBe('tool_rejected');
    // Time from the request's start to the rejection, on the monotonic clock.
    expect(events[rejected]!.t).toBeGreaterThan(events[at('first-token', 1)]!.t);
    expect(events[rejected]!.t).toBeLessThan(events[at('round-start', 2)]!.t);
    // The re-prompted round's call is whole and its tool answered.
    expect(at('call-end', 2, validCall.id)).toBeGreaterThan(at('round-start', 2));
    expect(events[at('tool-end', 2, validCall.id)]!.detail).toBe('ok');
  });

  it("with on_tool_reject 'error' the client gets a tool_rejected error, having decoded barely past the bad field", async () => {
    const before = sim();
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', { ...body, on_tool_reject: 'error' });
    expect(res.status).toBe(422);
    expect(res.json.error).toMatchObject({ type: 'tool_error', code: 'tool_rejected', param: null });
    expect(res.json.error.message).toBe('local_news rejected the call: location: must be "City, ST" (e.g. "Austin, TX"), got "Paris"');

    await settled(before);
    const generated = sim().tokensGenerated - before.tokensGenerated;
    expect(generated).toBeLessThanOrEqual(encodeText(THROUGH_BAD_FIELD).length + 3);
    expect(generated).toBeLessThan(encodeText(INVALID_CALL).length / 2);
  });

  it("streamed, with on_tool_reject 'error', ends the stream with an OpenAI error chunk", async () => {
    const before = sim();
    const streamed = await streamChat(conveyor.gateway.url, { ...body, on_tool_reject: 'error' });
    expect(streamed.status).toBe(200); // the stream had begun when the call was rejected
    expect(streamed.events.find((e) => e.type === 'tool_call.started')).toMatchObject({ name: 'local_news' });
    expect(streamed.events.some((e) => e.type === 'tool_call.completed')).toBe(false);
    const last = streamed.chunks.at(-1);
    expect(last?.error).toMatchObject({ code: 'tool_rejected' });
    expect(last?.error?.message).toContain('City, ST');
    expect(streamed.done).toBe(true);
    await settled(before);
  });
});
