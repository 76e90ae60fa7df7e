import { encodeText } from '../../sim/mistral-tokenizer.ts';
import type { Scenario, TimingProfile } from '../../sim/sim-server.ts';
import { WORK_TOOL_NAME } from './work-tool.ts';

/**
 * 4 ms per decode step whatever the batch (one sequence at a time here), and a prefill that does
 * not grow with the prompt: round 2's prompt carries round 1's payload, and a prefill that grew
 * with it would make the fixed overhead depend on g. Fast, so the whole sweep fits in ~90 s,
 * yet long enough per step that timer jitter on a loaded 2-core machine stays small beside it
 * (the fast-test profile's step, for the same reason).
 */
export const SWEEP_PROFILE: TimingProfile = {
  name: 'sweep',
  description: 't/g sweep: a fast synthetic engine.',
  source: 'Synthetic: 4 ms per decode step, flat 1 ms prefill. Not a measurement of any hardware.',
  decode: { baseMs: 4, perSeqMs: 0 },
  prefill: { baseMs: 1, perTokenMs: 0 },
  maxNumSeqs: 4,
  maxModelLen: 32768,
};

/** The sim's served model: its name selects the Mistral tool-call parser in the gateway. */
export const SWEEP_MODEL = 'mistral-7b-instruct-sim';

// Plain words, each one Mistral token with its leading space: the filler's length in tokens is
// the knob that sets g.
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'river', 'stone', 'light', 'green', 'table', 'house', 'water', 'north'];

/** A filler of exactly `tokens` Mistral tokens (checked with the sim's own tokenizer). */
export function fillerOfTokens(tokens: number): string {
  let text = '';
  for (let i = 0; encodeText(text).length < tokens; i++) text += `${i === 0 ? '' : ' '}${WORDS[i % WORDS.length]}`;
  return text;
}

/**
 * Round 1 is one Mistral v0.3 tool call to `work`, `ms` first (its value is the user message, so
 * one scenario serves every t) and the filler after it; round 2 answers briefly.
 */
export function sweepScenario(name: string, fillerTokens: number): Scenario {
  const payload = fillerOfTokens(fillerTokens);
  return {
    name,
    description: `t/g sweep: a ${WORK_TOOL_NAME} call with a ${fillerTokens}-token payload`,
    rules: [
      { when: { explicit: true, round: 1, lastRole: 'user' }, reply: `[TOOL_CALLS][{"name":"${WORK_TOOL_NAME}","arguments":{"ms":{{last_user}},"payload":"${payload}"}}]` },
      { when: { explicit: true, lastRole: 'tool' }, reply: 'Done.' },
    ],
  };
}

/** The chat request for one run: the scenario decodes a call whose `ms` is `toolMs`. */
export function sweepRequest(scenario: string, toolMs: number, partialExecution: boolean): Record<string, unknown> {
  return {
    model: SWEEP_MODEL,
    scenario,
    partial_execution: partialExecution,
    messages: [{ role: 'user', content: String(Math.round(toolMs)) }],
  };
}
