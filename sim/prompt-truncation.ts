import { InvalidRequestError } from '../core/errors.ts';

/**
 * vLLM's `truncate_prompt_tokens` (v0.11's CompletionRenderer: _validate_and_normalize_truncate_tokens,
 * then _maybe_apply_truncation): the prompt keeps its last `k` tokens, -1 standing for
 * max_model_len, and a `k` past max_model_len is refused before anything is tokenized. vLLM's
 * length check then reads the truncated prompt, so a prompt too long for the context is served
 * once cut. The schema has already refused anything below -1, as pydantic's `ge=-1` does.
 */
export function truncatePrompt(tokenIds: readonly number[], truncate: number | null | undefined, maxModelLen: number): readonly number[] {
  if (truncate == null) return tokenIds;
  // vLLM's renderer returns no prompt at all for 0 (and what follows differs by route and
  // version); the simulator plays one sequence per request, so it says so instead.
  if (truncate === 0) throw new InvalidRequestError('truncate_prompt_tokens 0 leaves no prompt: the simulator plays one prompt per request.', 'truncate_prompt_tokens');
  const keep = truncate < 0 ? maxModelLen : truncate;
  if (keep > maxModelLen) {
    throw new InvalidRequestError(`truncate_prompt_tokens (${keep}) cannot be greater than max_length (${maxModelLen}). Please select a smaller truncation size.`);
  }
  return keep >= tokenIds.length ? tokenIds : tokenIds.slice(-keep);
}
