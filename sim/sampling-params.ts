import { InvalidRequestError } from '../core/errors.ts';

/** The request fields vLLM's SamplingParams checks and the simulator reads (both completion routes). */
export interface SamplingFields {
  n?: number | null | undefined;
  presence_penalty?: number | null | undefined;
  frequency_penalty?: number | null | undefined;
  repetition_penalty?: number | null | undefined;
  temperature?: number | null | undefined;
  top_p?: number | null | undefined;
  top_k?: number | null | undefined;
  min_p?: number | null | undefined;
  min_tokens?: number | null | undefined;
  stop?: string | string[] | null | undefined;
}

/**
 * vLLM's SamplingParams._verify_args for the fields the simulator reads, in its order and words
 * (v0.8–0.11; top_k as from v0.9, where 0 disables and -1 is still taken). vLLM builds the
 * SamplingParams after the prompt and its length are checked, with `maxTokens` already settled
 * (the request's, or what the context leaves), so a bad max_tokens is reported here, not by the
 * schema. `param` is the field vLLM's VLLMValidationError names; none where it names none.
 */
export function verifySamplingParams(body: SamplingFields, maxTokens: number): void {
  // n > 1 is refused earlier, by the schema (the simulator plays one sequence per request).
  const n = body.n ?? 1;
  if (n < 1) throw new InvalidRequestError(`n must be at least 1, got ${n}.`);
  const presencePenalty = body.presence_penalty ?? 0;
  if (!(presencePenalty >= -2 && presencePenalty <= 2)) throw new InvalidRequestError(`presence_penalty must be in [-2, 2], got ${pyFloat(presencePenalty)}.`);
  const frequencyPenalty = body.frequency_penalty ?? 0;
  if (!(frequencyPenalty >= -2 && frequencyPenalty <= 2)) throw new InvalidRequestError(`frequency_penalty must be in [-2, 2], got ${pyFloat(frequencyPenalty)}.`);
  // No upper bound: vLLM takes any positive repetition_penalty.
  const repetitionPenalty = body.repetition_penalty ?? 1;
  if (repetitionPenalty <= 0) throw new InvalidRequestError(`repetition_penalty must be greater than zero, got ${pyFloat(repetitionPenalty)}.`);
  const temperature = body.temperature ?? 1;
  if (temperature < 0) throw new InvalidRequestError(`temperature must be non-negative, got ${pyFloat(temperature)}.`, 'temperature');
  const topP = body.top_p ?? 1;
  if (!(topP > 0 && topP <= 1)) throw new InvalidRequestError(`top_p must be in (0, 1], got ${pyFloat(topP)}.`, 'top_p');
  const topK = body.top_k ?? 0;
  if (topK < -1) throw new InvalidRequestError(`top_k must be 0 (disable), or at least 1, got ${topK}.`);
  const minP = body.min_p ?? 0;
  if (!(minP >= 0 && minP <= 1)) throw new InvalidRequestError(`min_p must be in [0, 1], got ${pyFloat(minP)}.`);
  if (maxTokens < 1) throw new InvalidRequestError(`max_tokens must be at least 1, got ${maxTokens}.`, 'max_tokens');
  const minTokens = body.min_tokens ?? 0;
  if (minTokens < 0) throw new InvalidRequestError(`min_tokens must be greater than or equal to 0, got ${minTokens}.`);
  if (minTokens > maxTokens) throw new InvalidRequestError(`min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${minTokens}.`);
  // A string `stop` is a one-string list there too.
  const stops = typeof body.stop === 'string' ? [body.stop] : (body.stop ?? []);
  if (stops.some((s) => s === '')) throw new InvalidRequestError('stop cannot contain an empty string.');
}

/**
 * A number as Python's repr() writes a float, since pydantic turns these fields into floats and
 * vLLM's messages format them: `-1.0`, `0.5`, `1e-05`, `1.5e+16`. JavaScript's String() differs
 * for whole numbers (`-1`) and in where it switches to exponents.
 */
export function pyFloat(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (Object.is(n, -0)) return '-0.0';
  // toExponential() without digits gives the shortest round-trip digits, as repr() does.
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 16) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  const fixed = String(n);
  return fixed.includes('.') ? fixed : `${fixed}.0`;
}
