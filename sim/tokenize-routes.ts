import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { promptTokenIds } from './chat-prompt.ts';
import { chatMessageSchema } from './chat-request-schema.ts';
import { sendErrorFor } from './error-response.ts';
import { readJsonRequest } from './json-request.ts';
import { sendJson } from './json-response.ts';
import { tokenPiece } from './mistral-tokenizer.ts';
import { decodeClientTokenIds, textPromptTokenIds } from './prompt-tokens.ts';
import { checkModel } from './request-plan.ts';
import type { SimContext } from './sim-context.ts';

// vLLM's TokenizeCompletionRequest | TokenizeChatRequest and DetokenizeRequest (protocol.py);
// loose, as pydantic's extra="allow": add_generation_prompt, chat_template, tools … are accepted.
const tokenizeTextSchema = z.looseObject({
  model: z.string().nullish(),
  prompt: z.string(),
  /** BOS first; vLLM's default for a text prompt. */
  add_special_tokens: z.boolean().default(true),
  return_token_strs: z.boolean().nullish(),
});

const tokenizeRequestSchema = z.union([
  tokenizeTextSchema,
  z.looseObject({
    model: z.string().nullish(),
    messages: z.array(chatMessageSchema),
    /** As on chat: their schemas are part of the prompt (vLLM's TokenizeChatRequest takes them too). */
    tools: z.array(z.unknown()).nullish(),
    // Taken and ignored: the model is served as with --tokenizer-mode mistral, whose chat template
    // gives token ids (BOS included) that no flag adds to.
    add_special_tokens: z.boolean().nullish(),
    return_token_strs: z.boolean().nullish(),
  }),
]);

const detokenizeRequestSchema = z.looseObject({
  model: z.string().nullish(),
  tokens: z.array(z.number().int().nonnegative()),
});

/**
 * POST /tokenize: the ids the simulator counts for a prompt, from the same code as a completion's
 * `usage.prompt_tokens` (a text prompt as on /v1/completions, messages as on /v1/chat/completions),
 * so a client can measure a prompt before sending it. No length check, as in vLLM: `max_model_len`
 * is there for the client to compare.
 */
export async function handleTokenize(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJsonRequest(req, res, tokenizeRequestSchema);
  if (body === undefined) return;
  try {
    checkModel(ctx, body.model);
    const tokens = isTextPrompt(body) ? textPromptTokenIds(body.prompt, body.add_special_tokens) : promptTokenIds(body.messages, body.tools);
    sendJson(res, 200, {
      count: tokens.length,
      max_model_len: ctx.engine.profile.maxModelLen,
      tokens,
      token_strs: body.return_token_strs ? tokens.map((id) => tokenPiece(id) ?? '') : null,
    });
  } catch (err) {
    sendErrorFor(res, err);
  }
}

// The union tries the text form first, so a string `prompt` means that form matched.
function isTextPrompt(body: z.output<typeof tokenizeRequestSchema>): body is z.output<typeof tokenizeTextSchema> {
  return typeof body.prompt === 'string';
}

/** POST /detokenize: token ids back to text, special tokens written out (`<s>`). */
export async function handleDetokenize(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJsonRequest(req, res, detokenizeRequestSchema);
  if (body === undefined) return;
  try {
    checkModel(ctx, body.model);
    sendJson(res, 200, { prompt: decodeClientTokenIds(body.tokens, 'tokens') });
  } catch (err) {
    sendErrorFor(res, err);
  }
}
