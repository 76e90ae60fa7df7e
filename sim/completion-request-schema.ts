import { z } from 'zod';
import { addValueError } from './error-response.ts';
import { laxBool, laxInt } from './pydantic-lax.ts';
import { checkSamplingRequest, samplingRequestFields, streamOptionsProblem, tokenCount } from './sampling-request-fields.ts';

const tokenIds = z.array(z.number().int().min(0));

/**
 * vLLM's CompletionRequest (the legacy /v1/completions), as far as the simulator reads it; other
 * fields are accepted and ignored, as with pydantic's extra="allow". The checks are those of
 * vLLM's main branch (0.11+ refuses "" here; 0.10 tokenized it to BOS). One prompt per request: a
 * string, a one-string list, token ids, or a list of one list of token ids; a list of several
 * prompts (strings or id lists) is refused in words that say so.
 */
export const completionRequestSchema = z
  .looseObject({
    ...samplingRequestFields,
    prompt: z.union([z.string(), z.array(z.string()).min(1), tokenIds, z.array(tokenIds).min(1)]).nullish(),
    /** Refused as vLLM refuses it without `--enable-prompt-embeds` (completions-route.ts). */
    prompt_embeds: z.unknown().optional(),
    /** BOS before a text prompt; token ids are taken as given either way. */
    add_special_tokens: laxBool().optional(),
    /** Refused once the model is known, as vLLM refuses it (completions-route.ts). */
    suffix: z.string().nullish(),
    /** vLLM's default is the OpenAI legacy API's: 16. */
    max_tokens: tokenCount.nullish(),
    /** The prompt's text before the completion's (completions-route.ts). */
    echo: laxBool().nullish(),
    /** Refused (checkSamplingRequest), 0 included; typed so that "5" is refused as 5 is. */
    logprobs: laxInt().nullish(),
  })
  .superRefine((body, ctx) => {
    // CompletionRequest's validate_prompt_and_prompt_embeds.
    const noPrompt = body.prompt == null || body.prompt === '';
    const noEmbeds = body.prompt_embeds == null || (Array.isArray(body.prompt_embeds) && body.prompt_embeds.length === 0);
    if (noPrompt && noEmbeds) addValueError(ctx, 'Either prompt or prompt_embeds must be provided and non-empty.', 'prompt');
    checkSamplingRequest(body, ctx);
    // vLLM answers a list of prompts as a batch, one choice each; the simulator plays one sequence per request.
    if (Array.isArray(body.prompt) && body.prompt.length > 1 && typeof body.prompt[0] !== 'number') {
      ctx.addIssue({ code: 'custom', path: ['prompt'], message: `The simulator takes one prompt per request; got a list of ${body.prompt.length}. Send one request per prompt.` });
    }
    // CompletionRequest's validate_stream_options (a model validator: a value_error at ('body',)).
    const streamProblem = streamOptionsProblem(body);
    if (streamProblem !== undefined) addValueError(ctx, streamProblem, 'stream_options');
  });

export type CompletionRequest = z.infer<typeof completionRequestSchema>;

/** vLLM's default max_tokens for /v1/completions. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;
