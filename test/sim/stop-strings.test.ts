import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeText } from '../../sim/mistral-tokenizer.ts';
import { IncrementalDetokenizer } from '../../sim/incremental-detokenizer.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { earlierStop, findStopPoint, findStopTokenPoint, stopHoldBackChars } from '../../sim/stop-strings.ts';
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

  it('takes the first string in the list when one token completes several, as vLLM\'s check_stop_strings does', () => {
    // The token ` world` completes both 'o w' (begun by `hello`) and 'world'.
    const one = findStopPoint(ids, ['o w'], false)!;
    expect(findStopPoint(ids, ['world'], false)!.tokens).toBe(one.tokens);
    const worldFirst = findStopPoint(ids, ['world', 'o w'], false)!;
    expect(worldFirst).toMatchObject({ stop: 'world', tokens: one.tokens });
    expect(REPLY.slice(0, worldFirst.textChars)).toBe('Thought: I should search.\nAction: search("hello ');
    const owFirst = findStopPoint(ids, ['o w', 'world'], true)!;
    expect(owFirst).toMatchObject({ stop: 'o w', tokens: one.tokens });
    expect(REPLY.slice(0, owFirst.textChars)).toBe('Thought: I should search.\nAction: search("hello w');
  });

  it('finds nothing for strings the reply lacks, or empty ones', () => {
    expect(findStopPoint(ids, ['Final Answer:', ''], false)).toBeUndefined();
    expect(findStopPoint(ids, [], false)).toBeUndefined();
  });
});

describe('stopHoldBackChars', () => {
  it('holds back the longest stop string but one, for a list of any length (a spread overflowed the stack)', () => {
    expect(stopHoldBackChars(['ab', 'abcd'], false)).toBe(3);
    expect(stopHoldBackChars(['ab', 'abcd'], true)).toBe(0);
    const many = Array.from({ length: 300_000 }, (_, i) => `s${i}`);
    expect(stopHoldBackChars(many, false)).toBe('s299999'.length - 1);
  });
});

describe('findStopTokenPoint', () => {
  const ids = encodeText(REPLY);
  // The token that writes `Action`'s first piece: a stop token in the middle of the reply.
  const at = ids.findIndex((_, i) => textOf(ids, i + 1).includes('Action'));

  it('stops at the first token in the list, leaving its text out unless it is to be shown', () => {
    const hidden = findStopTokenPoint(ids, [ids[at]!, 99_999], false)!;
    expect(hidden.stop).toBe(ids[at]);
    expect(hidden.tokens).toBe(ids.indexOf(ids[at]!) + 1);
    expect(hidden.textChars).toBe(textOf(ids, hidden.tokens - 1).length);
    const shown = findStopTokenPoint(ids, [ids[at]!], true)!;
    expect(shown.textChars).toBe(textOf(ids, shown.tokens).length);
    expect(findStopTokenPoint(ids, [99_999], false)).toBeUndefined();
    expect(findStopTokenPoint(ids, [], false)).toBeUndefined();
  });

  it('takes whichever stop the decode reaches first; on one token, the id unless the text is shown', () => {
    const byString = findStopPoint(ids, ['Observation:'], false)!;
    const byToken = findStopTokenPoint(ids, [ids[at]!], false)!;
    expect(earlierStop(byString, byToken, false)).toBe(byToken);
    expect(earlierStop(byString, undefined, false)).toBe(byString);
    const same = { ...byString, stop: 7 };
    expect(earlierStop(byString, same, false)).toBe(same);
    expect(earlierStop(byString, same, true)).toBe(byString);
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

  it('ends at a stop token with stop_reason its id, its text left out, the token counted in usage', async () => {
    const ids = encodeText(REPLY);
    const stopId = ids[ids.findIndex((_, i) => textOf(ids, i + 1).includes('Action'))]!;
    const tokens = ids.indexOf(stopId) + 1;
    const payloads = await allSseData(await ask({ stream: true, stop_token_ids: [stopId], stream_options: { include_usage: true } }));
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p));
    const text = chunks.flatMap((c) => c.choices.map((ch: { delta: { content?: string } }) => ch.delta.content ?? '')).join('');
    expect(text).toBe(textOf(ids, tokens - 1));
    expect(chunks.filter((c) => c.choices.length > 0).at(-1).choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: stopId });
    expect(chunks.at(-1).usage.completion_tokens).toBe(tokens);

    const shown = await (await ask({ stop_token_ids: [stopId], include_stop_str_in_output: true })).json();
    expect(shown.choices[0]).toMatchObject({ message: { content: textOf(ids, tokens) }, finish_reason: 'stop', stop_reason: stopId });
    // A stop string the decode reaches first wins.
    const first = await (await ask({ stop: 'I should', stop_token_ids: [stopId] })).json();
    expect(first.choices[0]).toMatchObject({ message: { content: 'Thought: ' }, stop_reason: 'I should' });
    const refused = await ask({ stop_token_ids: [-1] });
    expect(refused.status).toBe(400);
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
