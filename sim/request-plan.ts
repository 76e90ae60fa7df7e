import { InvalidRequestError, NotFoundError } from '../core/errors.ts';
import { verifyAllowedTokenIds } from './allowed-token-ids.ts';
import { logitBiasIds, verifyLogitBiasIds } from './logit-bias.ts';
import { VOCAB_SIZE } from './mistral-tokenizer.ts';
import { generatedTokenIds } from './reply-continuation.ts';
import { verifySamplingParams, type SamplingFields } from './sampling-params.ts';
import type { LoadedScenario } from './scenario-loader.ts';
import type { SequencePlan } from './sequence.ts';
import type { SimContext } from './sim-context.ts';
import { earlierStop, findStopPoint, findStopTokenPoint, stopHoldBackChars } from './stop-strings.ts';

/** The request fields that shape a sequence's plan, the same on /v1/chat/completions and /v1/completions. */
export interface PlanRequest extends SamplingFields {
  model?: string | null | undefined;
  /** Simulator extension: pick a scenario by name (same as model `sim-<name>`). */
  scenario?: string | undefined;
  max_tokens?: number | null | undefined;
  max_completion_tokens?: number | null | undefined;
  /** vLLM extension: token ids that end the sequence (stop_reason: the id). */
  stop_token_ids?: number[] | null | undefined;
  include_stop_str_in_output?: boolean | null | undefined;
  ignore_eos?: boolean | null | undefined;
  logit_bias?: Readonly<Record<string, number>> | null | undefined;
  allowed_token_ids?: readonly number[] | null | undefined;
}

/**
 * vLLM's _check_model: the served model, a scenario alias (listed like a LoRA adapter) or no
 * model at all; anything else is a 404. Returns the alias's scenario, if it is one. "No model"
 * is any falsy name, `""` included: vLLM's _is_model_supported starts `if not model_name: return True`.
 */
export function checkModel(ctx: SimContext, model: string | null | undefined): LoadedScenario | undefined {
  if (!model || model === ctx.modelName) return undefined;
  const byModel = ctx.scenarios.forModel(model);
  if (byModel === undefined) throw new NotFoundError(`The model \`${model}\` does not exist.`);
  return byModel;
}

/**
 * The `model` a response names: the request's, or the served model for a missing or empty one
 * (vLLM's _get_model_name, `if not model_name: return base_model_paths[0].name`).
 */
export function responseModelName(ctx: SimContext, model: string | null | undefined): string {
  return model || ctx.modelName;
}

/** The scenario a request asks for by model alias or by `scenario`; undefined: match on the prompt. */
export function selectScenario(ctx: SimContext, body: PlanRequest): LoadedScenario | undefined {
  const byModel = checkModel(ctx, body.model);
  if (body.scenario === undefined) return byModel;
  const named = ctx.scenarios.get(body.scenario);
  if (named === undefined) {
    throw new InvalidRequestError(`Unknown scenario \`${body.scenario}\`; loaded: ${ctx.scenarios.scenarios.map((s) => s.name).join(', ') || 'none'}.`, 'scenario');
  }
  return named;
}

export interface PlanInput {
  /** The prompt as token ids (its length is the prefill and the usage). */
  promptTokenIds: readonly number[];
  /** The reply as token ids. */
  outputTokenIds: readonly number[];
  /** Where the prompt came from, for the wording of a too-long error: chat `messages` or completions' `prompt`. */
  inputField: 'messages' | 'prompt';
  /** max_tokens when the request leaves the field out; undefined: whatever the context leaves (chat). */
  defaultMaxTokens?: number;
}

/** The engine's plan for one request: prompt, reply, the max_tokens bound, and the cut of its stop strings or stop tokens. */
export function sequencePlan(ctx: SimContext, body: PlanRequest, input: PlanInput): SequencePlan {
  const maxTokens = maxTokensFor(ctx, body, input);
  // The keys are read as ints before SamplingParams is built, their ids checked against the
  // vocabulary after, by vLLM's input processor.
  const biasIds = logitBiasIds(body.logit_bias);
  verifySamplingParams(body, maxTokens);
  verifyLogitBiasIds(biasIds, VOCAB_SIZE);
  verifyAllowedTokenIds(body.allowed_token_ids, VOCAB_SIZE);
  const minTokens = body.min_tokens ?? 0;
  const output = generatedTokenIds(input.outputTokenIds, { ignoreEos: body.ignore_eos === true, minTokens, maxTokens });
  const stops = typeof body.stop === 'string' ? [body.stop] : (body.stop ?? []);
  const keepStop = body.include_stop_str_in_output === true;
  return {
    promptTokens: input.promptTokenIds.length,
    promptTokenIds: input.promptTokenIds,
    outputTokenIds: output,
    maxTokens,
    stop: earlierStop(findStopPoint(output, stops, keepStop, minTokens), findStopTokenPoint(output, body.stop_token_ids ?? [], keepStop, minTokens), keepStop),
    holdBackChars: stopHoldBackChars(stops, keepStop),
  };
}

// The checks of vLLM's get_max_tokens / input validation, with its wording.
function maxTokensFor(ctx: SimContext, body: PlanRequest, input: PlanInput): number {
  const maxModelLen = ctx.engine.profile.maxModelLen;
  const promptTokens = input.promptTokenIds.length;
  if (promptTokens >= maxModelLen) {
    throw new InvalidRequestError(
      `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input ${input.inputField}.`,
      input.inputField,
    );
  }
  // vLLM takes `max_completion_tokens or max_tokens`: a 0 in the first falls through to the second.
  // The default applies only to a field left out: pydantic keeps an explicit null, which vLLM
  // reads as "whatever the context leaves" (completions' 16 included).
  const requested = (body.max_completion_tokens || body.max_tokens) ?? (body.max_tokens === undefined ? input.defaultMaxTokens : undefined) ?? null;
  if (requested === null) return maxModelLen - promptTokens;
  if (promptTokens + requested > maxModelLen) {
    throw new InvalidRequestError(
      `'max_tokens' or 'max_completion_tokens' is too large: ${requested}. This model's maximum context length is ${maxModelLen} tokens and your request has ${promptTokens} input tokens (${requested} > ${maxModelLen} - ${promptTokens}).`,
      'max_tokens',
    );
  }
  return requested;
}
