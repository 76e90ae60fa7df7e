import { encodeText } from './mistral-tokenizer.ts';

/**
 * What the simulated model writes once its scripted reply is over but it may not stop yet: this
 * sentence, again and again. Plain ASCII, so every token is whole text (no held-back bytes), and
 * fixed rather than the reply repeated, so that a reply with tool calls is not followed by a second
 * `[TOOL_CALLS]` list, and an empty reply still has something to continue with.
 */
export const FILLER_TEXT = ' The quick brown fox jumps over the lazy dog.';

export interface ContinuationOptions {
  /** vLLM's `ignore_eos`: EOS ends nothing, so the sequence runs until max_tokens (finish_reason "length"). */
  ignoreEos: boolean;
  /** vLLM's `min_tokens`: EOS and the stop tokens are masked until this many tokens are out. */
  minTokens: number;
  /** The sequence's max_tokens (the request's, or what the context leaves). */
  maxTokens: number;
}

/**
 * The tokens a sequence generates before it may end: the reply, then filler tokens up to max_tokens
 * with ignore_eos, or up to min_tokens. Benchmarks rely on ignore_eos for outputs of a fixed length;
 * every filler token is an ordinary engine step, counted in usage and timed like any other. The
 * engine appends EOS only when max_tokens leaves room, so with ignore_eos it never does.
 */
export function generatedTokenIds(replyIds: readonly number[], options: ContinuationOptions): readonly number[] {
  const wanted = options.ignoreEos ? options.maxTokens : options.minTokens;
  if (replyIds.length >= wanted) return replyIds;
  const filler = encodeText(FILLER_TEXT);
  // A fresh array: replyIds is the tokenizer cache's own.
  const ids = replyIds.slice();
  for (let i = 0; ids.length < wanted; i++) ids.push(filler[i % filler.length]!);
  return ids;
}
