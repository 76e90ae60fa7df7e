import { z } from 'zod';
import { laxBool, laxFloat, laxInt, PYDANTIC_TYPE } from './pydantic-lax.ts';

/** vLLM's response_format types: ResponseFormat's and StructuralTagResponseFormat's literals. */
const RESPONSE_FORMAT_TYPES = ['text', 'json_object', 'json_schema', 'structural_tag'] as const;

/**
 * The request fields /v1/chat/completions and /v1/completions share (vLLM's sampling and stream
 * options), as far as the simulator reads them; each route's schema adds its prompt.
 */
export const samplingRequestFields = {
  model: z.string().nullish(),
  stream: laxBool().nullish(),
  stream_options: z
    .looseObject({
      include_usage: laxBool().nullish(),
      continuous_usage_stats: laxBool().nullish(),
    })
    .nullish(),
  /** n < 1 is refused by SamplingParams' check, in its words (sampling-params.ts); n > 1 here. */
  n: laxInt().nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  /** vLLM extension: token ids that end the sequence; their text is left out unless include_stop_str_in_output. */
  stop_token_ids: z.array(laxInt().pipe(z.number().nonnegative())).nullish(),
  /** vLLM extension: keep the matched stop string (or stop token's text) at the end of the text. */
  include_stop_str_in_output: laxBool().nullish(),
  // Sampling itself is not simulated (the reply is scripted), but vLLM's SamplingParams refuses
  // out-of-range values (sampling-params.ts), so these are read to be refused the same way.
  temperature: laxFloat().nullish(),
  top_p: laxFloat().nullish(),
  top_k: laxInt().nullish(),
  min_p: laxFloat().nullish(),
  presence_penalty: laxFloat().nullish(),
  frequency_penalty: laxFloat().nullish(),
  repetition_penalty: laxFloat().nullish(),
  // Output is deterministic, so unused; typed so that a seed pydantic refuses (a fraction, a word)
  // is a 400 here too. vLLM's bound is int64's (torch.long). A double cannot hold 2^63 - 1, which
  // reads as 2^63: hence <=.
  seed: laxInt()
    .refine((v) => Math.abs(v) <= 2 ** 63, 'Input should be a valid integer between -2^63 and 2^63-1')
    .nullish(),
  /**
   * Checked as vLLM's pydantic model checks its `type`, but not applied: the scripted reply is
   * what it is, whatever format is asked for.
   */
  response_format: z
    .looseObject({
      type: z.enum(RESPONSE_FORMAT_TYPES, {
        // pydantic's words for a Literal field.
        error: (issue) => (issue.input === undefined ? 'Field required' : "Input should be 'text', 'json_object', 'json_schema' or 'structural_tag'"),
      }),
    })
    .nullish(),
  /**
   * Token id (a JSON key, so a string) → bias. Not applied (the reply is scripted), but checked as
   * vLLM checks it (logit-bias.ts): pydantic's `dict[str, float]` here, the ids in the plan.
   */
  logit_bias: z.record(z.string(), laxFloat()).nullish(),
  /** vLLM extension: the only ids sampling may pick. Checked (allowed-token-ids.ts), not applied. */
  allowed_token_ids: z.array(laxInt()).nullish(),
  /**
   * vLLM extension: keep only the prompt's last N tokens (-1: max_model_len); pydantic's `ge=-1`
   * here, the rest where the prompt is built (prompt-truncation.ts).
   */
  truncate_prompt_tokens: laxInt()
    .refine((v) => v >= -1, { message: 'Input should be greater than or equal to -1', params: { [PYDANTIC_TYPE]: 'greater_than_equal' } })
    .nullish(),
  /**
   * vLLM extension: the request's place in a priority scheduler's queue. vLLM V1 under its default
   * FCFS policy ignores it (sim/README.md, Errors), as the simulator's FIFO does; typed because
   * pydantic's `int = 0` refuses a word, a fraction and null.
   */
  priority: laxInt().optional(),
  /** vLLM extension: EOS is no stop; the sequence runs to max_tokens (reply-continuation.ts). */
  ignore_eos: laxBool().nullish(),
  /** vLLM extension: EOS, stop tokens and stop strings do not end the sequence before this many tokens. */
  min_tokens: laxInt().nullish(),
  /** vLLM 0.10.2 on: the prompt's and the generated tokens' ids in the answer (`prompt_token_ids`, `token_ids`), EOS included. */
  return_token_ids: laxBool().nullish(),
  /** Simulator extension: pick a scenario by name (same as model `sim-<name>`). */
  scenario: z.string().min(1).optional(),
};

/**
 * max_tokens and max_completion_tokens: any integer here, as pydantic takes them in vLLM's
 * protocol.py; a count below 1 is refused later by SamplingParams, in its words (sampling-params.ts).
 */
export const tokenCount = laxInt();

type StreamOptions = z.output<typeof samplingRequestFields.stream_options>;

/** vLLM's validators for those fields, same wording; for a schema's superRefine. */
export function checkSamplingRequest(
  body: { n?: number | null; logprobs?: unknown; prompt_logprobs?: unknown },
  ctx: z.RefinementCtx,
): void {
  if (body.n != null && body.n > 1) {
    ctx.addIssue({ code: 'custom', path: ['n'], message: 'n > 1 is not supported by the simulator.' });
  }
  // The scripted reply has no distribution to report: refused, rather than answered with the
  // `"logprobs": null` a client would take for vLLM's and read nothing from. (Chat asks with
  // `logprobs: true`; completions with a count, 0 included.)
  if (body.logprobs === true || typeof body.logprobs === 'number') {
    ctx.addIssue({ code: 'custom', path: ['logprobs'], message: 'logprobs are not supported by the simulator.' });
  }
  if (body.prompt_logprobs != null) {
    ctx.addIssue({ code: 'custom', path: ['prompt_logprobs'], message: 'prompt_logprobs are not supported by the simulator.' });
  }
}

/**
 * vLLM's validate_stream_options, a `mode="before"` model validator of both request models:
 * `stream_options` needs `stream`, but only when it is truthy to Python, so an empty object passes.
 * Reported as a value_error at ('body',) (error-response.ts), after the route's other validators.
 */
export function streamOptionsProblem(body: { stream?: boolean | null; stream_options?: StreamOptions }): string | undefined {
  const options = body.stream_options;
  if (options == null || Object.keys(options).length === 0 || body.stream) return undefined;
  return 'Stream options can only be defined when `stream=True`.';
}

/**
 * What `stream_options` asks of a stream's usage (vLLM's should_include_usage): include_usage
 * defaults to true once stream_options is given (StreamOptions' default), but an explicit null is
 * None there, which is falsy: no usage. continuous_usage_stats only counts with include_usage.
 */
export function usageOptions(streamOptions: StreamOptions): { includeUsage: boolean; continuousUsage: boolean } {
  if (streamOptions == null) return { includeUsage: false, continuousUsage: false };
  const includeUsage = streamOptions.include_usage === undefined ? true : streamOptions.include_usage === true;
  return { includeUsage, continuousUsage: includeUsage && streamOptions.continuous_usage_stats === true };
}
