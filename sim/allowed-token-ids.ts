import { InvalidRequestError } from '../core/errors.ts';

/**
 * vLLM's input processor's check of `allowed_token_ids`, right after logit_bias' ids
 * (v1/engine/processor.py _validate_sampling_params, v0.10–0.11; a bare ValueError, so no
 * `param`): an empty list, then an id outside the vocabulary. The list itself is not applied:
 * the reply is scripted.
 */
export function verifyAllowedTokenIds(ids: readonly number[] | null | undefined, vocabSize: number): void {
  if (ids == null) return;
  if (ids.length === 0) throw new InvalidRequestError('allowed_token_ids is not None and empty!');
  if (!ids.every((id) => id >= 0 && id < vocabSize)) throw new InvalidRequestError('allowed_token_ids contains out-of-vocab token id!');
}
