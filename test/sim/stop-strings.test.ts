import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeText } from '../../sim/mistral-tokenizer.ts';
import { IncrementalDetokenizer } from '../../sim/incremental-detokenizer.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { findStopPoint } from '../../sim/stop-strings.ts';
import { allSseData, fixedReplyScenario, postChat } from './sim-test-helpers.ts';

const REPLY = 'Thought: I should search.\nAction: search("hello world")\nObservation: none yet';

/** Tokens `n` first tokens decode to. */
function textOf(ids: readonly number[], n: number): string {
  const detokenizer = new IncrementalDetokenizer();
  return ids.slice(0, n).map((id) => detokenizer.push(id)).join('');
}

describe('findStopPoint', () => {
  const ids = encodeText(REPLY);

  it('stops at the first token whose text completes a stop string, and cuts the text where it begins', () => {
    const point = findStopPoint(ids, ['Observation:'], false)!;
    expect(point.stop).toBe('Observation:');
    expect(REPLY.slice(0, point.textChars)).toBe('Thought: I should search.\nAction: search("hello world")\n');
    expect(textOf(ids, point.tokens)).toContain('Observation:');
    expect(textOf(ids, point.tokens - 1)).not.toContain('Observation:');
  });

  it('keeps the stop string with include_stop_str_in_output, and takes whichever string the decode reaches first', () => {
    const point = findStopPoint(ids, ['Observation:', 'Action:'], true)!;
    expect(point.stop).toBe('Action:');
    expect(REPLY.slice(0, point.textChars)).toBe('Thought: I should search.\nAction:');
  });

  it('finds nothing for strings the reply lacks, or empty ones', () => {
    expect(findStopPoint(ids, ['Final Answer:', ''], false)).toBeUndefined();
    expect(findStopPoint(ids, [], false)).toBeUndefined();
  });
});

describe('the simulator honours `stop` as vLLM does', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('react', REPLY)] });
  });
  afterAll(() => sim.close());

  const ask = (extra: Record<string, unknown>) => postChat(sim.url, { model: 'mistral-7b-instruct-sim', messages: [{ role: 'user', content: 'go' }], ...extra });

  it('streams the text up to the stop string, then finish_reason stop with stop_reason naming it', async () => {
    const payloads = await allSseData(await ask({ stream: true, stop: ['Observation:'], stream_options: { include_usage: true } }));
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p));
    const text = chunks.flatMap((c) => c.choices.map((ch: { delta: { content?: string } }) => ch.delta.content ?? '')).join('');
    expect(text).toBe('Thought: I should search.\nAction: search("hello world")\n');
    const last = chunks.filter((c) => c.choices.length > 0).at(-1).choices[0];
    expect(last).toMatchObject({ finish_reason: 'stop', stop_reason: 'Observation:' });
    const usage = chunks.at(-1).usage;
    expect(usage.completion_tokens).toBe(findStopPoint(encodeText(REPLY), ['Observation:'], false)!.tokens);
  });

  it('answers a non-streaming request the same way, with the string kept when asked', async () => {
    const body = await (await ask({ stop: 'Action:', include_stop_str_in_output: true })).json();
    expect(body.choices[0]).toMatchObject({ message: { content: 'Thought: I should search.\nAction:' }, finish_reason: 'stop', stop_reason: 'Action:' });
  });

  it('ends with length when max_tokens comes first, and as usual when the string never appears', async () => {
    const short = await (await ask({ stop: 'Observation:', max_tokens: 3 })).json();
    expect(short.choices[0]).toMatchObject({ finish_reason: 'length', stop_reason: null });
    const whole = await (await ask({ stop: ['Final Answer:'] })).json();
    expect(whole.choices[0]).toMatchObject({ message: { content: REPLY }, finish_reason: 'stop', stop_reason: null });
  });

  it('holds back the last (longest stop string − 1) characters while streaming, as vLLM does, and releases them at the end', async () => {
    const ids = encodeText(REPLY);
    const streamed = async (extra: Record<string, unknown>) => {
      const chunks = (await allSseData(await ask({ stream: true, ...extra }))).slice(0, -1).map((p) => JSON.parse(p));
      // One chunk per token after the role chunk.
      return chunks.slice(1).map((c) => c.choices[0].delta.content as string);
    };
    const sentAfter = (contents: string[]) => contents.map((_, i) => contents.slice(0, i + 1).join('').length);

    // 'Observation:' is 12 characters: 11 stay behind until the stop string completes.
    const cut = await streamed({ stop: ['Observation:', 'Done.'] });
    expect(cut.join('')).toBe('Thought: I should search.\nAction: search("hello world")\n');
    sentAfter(cut).slice(0, -1).forEach((sent, i) => expect(sent).toBe(Math.max(0, textOf(ids, i + 1).length - 11)));

    // A string that never appears: everything arrives, the last 12 characters with the last token.
    const whole = await streamed({ stop: 'Final Answer:' });
    expect(whole.join('')).toBe(REPLY);
    expect(sentAfter(whole).at(-2)).toBe(REPLY.length - 12);

    // Shown stop strings need no hold-back: each token's text leaves with it.
    const shown = await streamed({ stop: 'Observation:', include_stop_str_in_output: true });
    sentAfter(shown).slice(0, -1).forEach((sent, i) => expect(sent).toBe(textOf(ids, i + 1).length));
  });
});
