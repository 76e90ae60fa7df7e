import type { ContextLimits } from '../core/errors.ts';
import type { ChatMessage } from './chat-request-schema.ts';
import { capObservation } from './observation-cap.ts';
import type { RoundOutput } from './session-round.ts';

/**
 * The room a re-cut leaves for the reply when the request set no max_tokens: vLLM would otherwise
 * give the reply whatever the prompt leaves, which after a cut to the last token is nothing.
 */
const DEFAULT_REPLY_ROOM = 1024;
/** Tokens are not bytes: what a cut frees is estimated from the prompt's average, so it cuts this much more. */
const MARGIN = 1.25;
/** No observation is cut below this (config maxObservationChars' own minimum): the model must still see what the tool said. */
export const MIN_OBSERVATION_BYTES = 200;

/**
 * A later round's prompt is the client's messages plus this request's tool calls and results; when
 * the results, each within maxObservationChars, together push it past the model's context, the
 * upstream refuses it (context_length_exceeded) though the client sent nothing wrong. The gateway
 * wrote those results, so it can shorten them: the cap in UTF-8 bytes that, applied to every
 * observation of the request, frees the tokens the refusal says are over, plus room for the reply
 * (the request's max_tokens left, at most a quarter of the context). The largest results lose most
 * (only those over the cap lose anything); undefined when cutting all of them to
 * MIN_OBSERVATION_BYTES would not free enough.
 */
export function observationCapToFit(
  err: ContextLimits,
  prompt: readonly ChatMessage[],
  observations: readonly string[],
  maxTokens: number | undefined,
): number | undefined {
  const reserve = Math.min(maxTokens ?? DEFAULT_REPLY_ROOM, Math.floor(err.maxModelLen / 4));
  const tokensOver = err.inputTokens - (err.maxModelLen - reserve);
  if (tokensOver <= 0 || err.inputTokens <= 0) return undefined;
  const bytesPerToken = promptTextBytes(prompt) / err.inputTokens;
  const drop = Math.ceil(tokensOver * Math.max(bytesPerToken, 1) * MARGIN);
  return capThatDrops(observations.map((o) => Buffer.byteLength(o)), drop, MIN_OBSERVATION_BYTES);
}

/**
 * The largest cap for which the parts of `sizes` above it add up to at least `drop`; undefined
 * when even `floor` falls short.
 */
export function capThatDrops(sizes: readonly number[], drop: number, floor: number): number | undefined {
  const dropped = (cap: number) => sizes.reduce((sum, s) => sum + Math.max(0, s - cap), 0);
  if (dropped(floor) < drop) return undefined;
  let low = floor;
  let high = Math.max(floor, ...sizes);
  // dropped() falls as the cap rises: the largest cap that still drops enough.
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (dropped(mid) >= drop) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** `out` with every result of the gateway's tools cut to `cap` (capObservation). */
export function recutRound<T extends Pick<RoundOutput, 'calls'>>(out: T, cap: number): T {
  return { ...out, calls: out.calls.map((c) => ({ ...c, result: capObservation(c.result, cap) })) };
}

/** The UTF-8 bytes of the text a prompt's messages carry (contents, text parts, reasoning, call arguments). */
function promptTextBytes(messages: readonly ChatMessage[]): number {
  let bytes = 0;
  for (const m of messages) {
    const content = (m as { content?: unknown }).content;
    if (typeof content === 'string') bytes += Buffer.byteLength(content);
    else if (Array.isArray(content)) for (const part of content) if (typeof part?.text === 'string') bytes += Buffer.byteLength(part.text);
    // A thinking model's reasoning, which a round's turn carries back (round-messages.ts).
    for (const field of ['reasoning', 'reasoning_content'] as const) {
      const reasoning = (m as Record<string, unknown>)[field];
      if (typeof reasoning === 'string') bytes += Buffer.byteLength(reasoning);
    }
    for (const call of (m as { tool_calls?: Array<{ function?: { arguments?: unknown } }> }).tool_calls ?? []) {
      if (typeof call.function?.arguments === 'string') bytes += Buffer.byteLength(call.function.arguments);
    }
  }
  return bytes;
}
