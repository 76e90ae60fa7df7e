import { InvalidRequestError } from '../core/errors.ts';

// Python's int() over a string: surrounding whitespace, a sign, digits with single underscores.
const PY_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

/**
 * vLLM's checks of `logit_bias` (a map of token id, a string as JSON keys are, to bias), in its
 * order: SamplingParams.from_optional turns each key into an int (v0.11: a bare int(), whose
 * ValueError the serving layer answers as a 400 in Python's words), then the input processor
 * refuses ids outside the vocabulary, all of them in one message (v1/engine/processor.py
 * _validate_logit_bias, v0.10–0.11; SamplingParams._validate_logit_bias later, which names
 * `parameter="logit_bias"`). The biases themselves are not applied: the reply is scripted.
 */
export function verifyLogitBias(logitBias: Readonly<Record<string, number>> | null | undefined, vocabSize: number): void {
  if (logitBias == null) return;
  const ids: number[] = [];
  for (const key of Object.keys(logitBias)) {
    if (!PY_INT.test(key)) throw new InvalidRequestError(`invalid literal for int() with base 10: ${pyRepr(key)}`, 'logit_bias');
    ids.push(Number(key.trim().replaceAll('_', '')));
  }
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
