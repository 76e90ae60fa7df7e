import { InvalidRequestError } from '../core/errors.ts';
import { keysInSourceOrder } from './source-key-order.ts';

// Python's int() over a string: surrounding whitespace, a sign, digits with single underscores.
const PY_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

/**
 * The token ids of `logit_bias` (a map of token id, a string as JSON keys are, to bias), read as
 * v0.11's SamplingParams.from_optional reads them: a bare int() over each key, whose ValueError
 * the serving layer answers as a 400 in Python's words. That happens before SamplingParams is
 * built, so before its range checks (sampling-params.ts): call this first. The ids come in the
 * request's order, each once, as the dict `{int(token): bias …}` has them ("5" and "05" are one
 * id): JavaScript's key order (integer keys first, ascending) named the bad ids in another order
 * than vLLM's message, and a repeated id twice.
 */
export function logitBiasIds(logitBias: Readonly<Record<string, number>> | null | undefined): number[] {
  if (logitBias == null) return [];
  const ids = new Set<number>();
  for (const key of keysInSourceOrder(logitBias)) {
    if (!PY_INT.test(key)) throw new InvalidRequestError(`invalid literal for int() with base 10: ${pyRepr(key)}`, 'logit_bias');
    ids.add(Number(key.trim().replaceAll('_', '')));
  }
  return [...ids];
}

/**
 * The input processor's check of those ids, after SamplingParams' own: ids outside the vocabulary
 * are refused, all of them in one message (v1/engine/processor.py _validate_logit_bias, v0.10–0.11;
 * SamplingParams._validate_logit_bias later, which names `parameter="logit_bias"`). The biases
 * themselves are not applied: the reply is scripted.
 */
export function verifyLogitBiasIds(ids: readonly number[], vocabSize: number): void {
  const invalid = ids.filter((id) => id < 0 || id >= vocabSize);
  if (invalid.length > 0) {
    throw new InvalidRequestError(`token_id(s) [${invalid.join(', ')}] in logit_bias contain out-of-vocab token ids. Vocabulary size: ${vocabSize}`, 'logit_bias');
  }
}

/** A short string as Python's repr() writes it (single quotes unless it holds one and no double quote). */
function pyRepr(s: string): string {
  if (s.includes("'") && !s.includes('"')) return `"${s}"`;
  return `'${s.replaceAll("'", "\\'")}'`;
}
