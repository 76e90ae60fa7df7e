import { IncrementalDetokenizer } from './incremental-detokenizer.ts';

/** Where a reply stops on one of the request's `stop` strings or `stop_token_ids`, as vLLM's stop checker finds it. */
export interface StopPoint {
  /** Tokens generated: up to and including the one whose text completed the stop string (or the stop token). */
  tokens: number;
  /** Characters of text the client gets: before the stop string, or through it with `include_stop_str_in_output`. */
  textChars: number;
  /** The stop string or token id that matched (vLLM's `stop_reason`). */
  stop: string | number;
}

/**
 * vLLM checks the stop strings after every token, in the text that token added (plus the tail a
 * string could straddle); the first token that completes one ends the sequence, and the text is cut
 * where that string begins. When one token completes several, the first of them in the request's
 * list wins, wherever it begins (vLLM's check_stop_strings returns the first string it finds, each
 * searched from its own length back). Empty strings never match. Within the first `minTokens`
 * tokens nothing is checked (vLLM's detokenizer skips the check until then), so a string those
 * tokens complete is never matched.
 */
export function findStopPoint(outputTokenIds: readonly number[], stops: readonly string[], includeStop: boolean, minTokens = 0): StopPoint | undefined {
  const wanted = stops.filter((s) => s !== '');
  if (wanted.length === 0) return undefined;
  const detokenizer = new IncrementalDetokenizer();
  let text = '';
  for (let i = 0; i < outputTokenIds.length; i++) {
    const added = detokenizer.push(outputTokenIds[i]!);
    if (added === '') continue;
    const before = text.length;
    text += added;
    if (i < minTokens) continue;
    for (const stop of wanted) {
      const at = text.indexOf(stop, Math.max(0, before - stop.length + 1));
      if (at >= 0) return { tokens: i + 1, textChars: includeStop ? at + stop.length : at, stop };
    }
  }
  return undefined;
}

/**
 * `stop_token_ids`: the first generated token in the list ends the sequence. As in vLLM's V1
 * detokenizer, that token counts as generated but its text is left out of the output, unless
 * `include_stop_str_in_output`; `stop_reason` is the token id. vLLM masks stop tokens within the
 * first `minTokens` tokens; the scripted reply cannot be resampled, so one there is written as
 * ordinary text and ends nothing.
 */
export function findStopTokenPoint(outputTokenIds: readonly number[], stopTokenIds: readonly number[], includeStop: boolean, minTokens = 0): StopPoint | undefined {
  if (stopTokenIds.length === 0) return undefined;
  const wanted = new Set(stopTokenIds);
  const detokenizer = new IncrementalDetokenizer();
  let textChars = 0;
  for (let i = 0; i < outputTokenIds.length; i++) {
    const id = outputTokenIds[i]!;
    const added = detokenizer.push(id).length;
    if (i >= minTokens && wanted.has(id)) return { tokens: i + 1, textChars: includeStop ? textChars + added : textChars, stop: id };
    textChars += added;
  }
  return undefined;
}

/**
 * The stop the decode reaches first. On the same token a stop string wins only when the stop
 * token's text is shown (`include_stop_str_in_output`): vLLM checks stop strings on the text, and
 * otherwise that token's text never reaches the check.
 */
export function earlierStop(byString: StopPoint | undefined, byToken: StopPoint | undefined, includeStop: boolean): StopPoint | undefined {
  if (byString === undefined || byToken === undefined) return byString ?? byToken;
  if (byString.tokens !== byToken.tokens) return byString.tokens < byToken.tokens ? byString : byToken;
  return includeStop ? byString : byToken;
}

/**
 * vLLM's `stop_buffer_length`: while a request has stop strings that are not to be shown, the
 * stream holds back the text's last (longest string − 1) characters, so that no part of a stop
 * string reaches the client before the server knows whether it completes. Released when the
 * sequence finishes.
 */
export function stopHoldBackChars(stops: readonly string[], includeStop: boolean): number {
  if (includeStop || stops.length === 0) return 0;
  // A loop, not Math.max(...lengths): spread, a long list (the gateway passes any number) overflowed the stack.
  let longest = 0;
  for (const stop of stops) if (stop.length > longest) longest = stop.length;
  return Math.max(0, longest - 1);
}
