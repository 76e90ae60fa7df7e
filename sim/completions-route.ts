import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientRequestId, finalUsage } from './chat-completion-shapes.ts';
import { completionRequestSchema, DEFAULT_COMPLETION_MAX_TOKENS, type CompletionRequest } from './completion-request-schema.ts';
import { newTextCompletionIdentity, textCompletion } from './completion-shapes.ts';
import { CompletionStreamWriter } from './completion-stream-writer.ts';
import { sendErrorFor } from './error-response.ts';
import { readJsonRequest } from './json-request.ts';
import { sendJson } from './json-response.ts';
import { InvalidRequestError } from '../core/errors.ts';
import { encodeText } from './mistral-tokenizer.ts';
import { playStreamed, playWhole } from './play-sequence.ts';
import { decodeClientTokenIds, textPromptTokenIds } from './prompt-tokens.ts';
import { truncatePrompt } from './prompt-truncation.ts';
import { responseModelName, selectScenario, sequencePlan } from './request-plan.ts';
import { usageOptions } from './sampling-request-fields.ts';
import type { SimContext } from './sim-context.ts';

/**
 * POST /v1/completions, vLLM's legacy text endpoint: the prompt is raw text (or token ids), not a
 * conversation. The reply is picked as for a chat whose one user message is the prompt, and
 * played through the same engine loop, so it batches with the chat streams.
 */
export async function handleCompletions(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJsonRequest(req, res, completionRequestSchema);
  if (body === undefined) return;
  try {
    startCompletion(ctx, body, res, clientRequestId(req, body));
  } catch (err) {
    sendErrorFor(res, err);
  }
}

function promptOf(body: CompletionRequest, maxModelLen: number): { text: string; tokenIds: readonly number[] } {
  // The schema lets through a prompt, or embeddings: a server started without the flag refuses those.
  if (body.prompt == null || body.prompt === '') throw new InvalidRequestError('You must set `--enable-prompt-embeds` to input `prompt_embeds`.', 'prompt_embeds');
  // The schema lets through one prompt only: a list of prompts (strings or id lists) has one element.
  const prompt = Array.isArray(body.prompt) && body.prompt.length > 0 && typeof body.prompt[0] !== 'number' ? body.prompt[0]! : body.prompt;
  const given = typeof prompt === 'string' ? textPromptTokenIds(prompt, body.add_special_tokens ?? true) : (prompt as number[]);
  const tokenIds = truncatePrompt(given, body.truncate_prompt_tokens, maxModelLen);
  // vLLM's input processor refuses a prompt of no tokens (an empty id list, or "" without BOS).
  if (tokenIds.length === 0) throw new InvalidRequestError('The decoder prompt cannot be empty');
  return { text: typeof prompt === 'string' ? prompt : decodeClientTokenIds(tokenIds, 'prompt'), tokenIds };
}

function startCompletion(ctx: SimContext, body: CompletionRequest, res: ServerResponse, requestId: string | undefined): void {
  const selected = selectScenario(ctx, body);
  // vLLM's serving_completion refuses it right after the model check, before the prompt is read.
  if (body.suffix != null) throw new InvalidRequestError('suffix is not currently supported');
  const prompt = promptOf(body, ctx.engine.profile.maxModelLen);
  const reply = ctx.scenarios.reply([{ role: 'user', content: prompt.text }], selected).text;
  // vLLM's echo_without_generation (protocol.py to_sampling_params, serving_completion.py): echo
  // with max_tokens 0 answers the prompt alone, yet samples one token, which the usage counts.
  const echoOnly = body.echo === true && body.max_tokens === 0;
  const plan = sequencePlan(ctx, echoOnly ? { ...body, max_tokens: 1 } : body, {
    promptTokenIds: prompt.tokenIds,
    outputTokenIds: encodeText(reply),
    inputField: 'prompt',
    defaultMaxTokens: DEFAULT_COMPLETION_MAX_TOKENS,
  });
  const promptTokens = plan.promptTokens;
  const ident = newTextCompletionIdentity(responseModelName(ctx, body.model), requestId);

  const returnTokenIds = body.return_token_ids === true ? prompt.tokenIds : undefined;
  // `echo`: the text starts with the prompt's, as vLLM writes it (the prompt as sent, or its ids
  // decoded), on the first chunk of a stream; the usage counts the completion alone all the same.
  // With return_token_ids vLLM echoes "" (serving_completion.py): the prompt goes out as its ids.
  const echo = body.echo === true ? (returnTokenIds === undefined ? prompt.text : '') : undefined;
  if (body.stream) {
    const options = { promptTokens, ...usageOptions(body.stream_options), promptTokensDetails: ctx.promptTokensDetails, returnTokenIds, echo, echoOnly };
    return playStreamed(ctx, plan, res, new CompletionStreamWriter(res, ident, options));
  }
  playWhole(ctx, plan, res, (text, last, tokenIds) => {
    const ids = returnTokenIds === undefined ? undefined : { prompt: returnTokenIds, generated: tokenIds };
    const totals = finalUsage(promptTokens, last.completionTokens, last.cachedTokens, ctx.promptTokensDetails);
    sendJson(res, 200, textCompletion(ident, (echo ?? '') + (echoOnly ? '' : text), last.finishReason, last.stopReason ?? null, totals, ids));
  });
}
