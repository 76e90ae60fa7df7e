import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidRequestError, NotFoundError } from '../core/errors.ts';
import { chatCompletion, newCompletionIdentity, usage } from './chat-completion-shapes.ts';
import { promptTokenIds } from './chat-prompt.ts';
import { chatCompletionRequestSchema, type ChatCompletionRequest } from './chat-request-schema.ts';
import { ChatStreamWriter } from './chat-stream-writer.ts';
import { sendErrorFor, sendValidationError, sendVllmError, zodProblems } from './error-response.ts';
import { sendJson } from './json-response.ts';
import { encodeText } from './mistral-tokenizer.ts';
import { layoutToolCalls, messageToolCalls, ToolCallsStream } from './mistral-tool-calls.ts';
import { BodyTooLargeError, readBody } from './request-body.ts';
import type { LoadedScenario } from './scenario-loader.ts';
import type { SequencePlan } from './sequence.ts';
import type { SimContext } from './sim-context.ts';
import { findStopPoint, stopHoldBackChars } from './stop-strings.ts';

const BODY_LIMIT_BYTES = 32 * 1024 * 1024;

/** POST /v1/chat/completions: validate, pick the reply, and play it through the engine loop. */
export async function handleChatCompletions(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // vLLM's validate_json_request dependency: a RequestValidationError, hence a plain 400.
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    req.resume();
    return sendValidationError(res, [{ type: 'media_type', loc: null, msg: "Unsupported Media Type: Only 'application/json' is allowed" }]);
  }
  let raw: Buffer;
  try {
    raw = await readBody(req, BODY_LIMIT_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      return sendVllmError(res, 413, err.message, 'Request Entity Too Large');
    }
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    return sendValidationError(res, [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error' }]);
  }
  const parsed = chatCompletionRequestSchema.safeParse(json);
  if (!parsed.success) return sendValidationError(res, zodProblems(parsed.error));
  try {
    startCompletion(ctx, parsed.data, res);
  } catch (err) {
    sendErrorFor(res, err);
  }
}

function selectScenario(ctx: SimContext, body: ChatCompletionRequest): LoadedScenario | undefined {
  const model = body.model ?? ctx.modelName;
  const byModel = model === ctx.modelName ? undefined : ctx.scenarios.forModel(model);
  if (model !== ctx.modelName && byModel === undefined) {
    throw new NotFoundError(`The model \`${model}\` does not exist.`);
  }
  if (body.scenario === undefined) return byModel;
  const named = ctx.scenarios.get(body.scenario);
  if (named === undefined) {
    throw new InvalidRequestError(`Unknown scenario \`${body.scenario}\`; loaded: ${ctx.scenarios.scenarios.map((s) => s.name).join(', ') || 'none'}.`, 'scenario');
  }
  return named;
}

// The checks of vLLM's get_max_tokens / input validation, with its wording.
function maxTokensFor(ctx: SimContext, body: ChatCompletionRequest, promptTokens: number): number {
  const maxModelLen = ctx.engine.profile.maxModelLen;
  if (promptTokens >= maxModelLen) {
    throw new InvalidRequestError(
      `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input messages.`,
      'messages',
    );
  }
  const requested = body.max_completion_tokens ?? body.max_tokens ?? null;
  if (requested === null) return maxModelLen - promptTokens;
  if (promptTokens + requested > maxModelLen) {
    throw new InvalidRequestError(
      `'max_tokens' or 'max_completion_tokens' is too large: ${requested}. This model's maximum context length is ${maxModelLen} tokens and your request has ${promptTokens} input tokens (${requested} > ${maxModelLen} - ${promptTokens}).`,
      'max_tokens',
    );
  }
  return requested;
}

function toolCallsStream(reply: string): ToolCallsStream | undefined {
  const layout = layoutToolCalls(reply);
  return layout && new ToolCallsStream(layout);
}

function startCompletion(ctx: SimContext, body: ChatCompletionRequest, res: ServerResponse): void {
  const selected = selectScenario(ctx, body);
  const prompt = promptTokenIds(body.messages);
  const promptTokens = prompt.length;
  const reply = ctx.scenarios.reply(body.messages, selected).text;
  const outputTokenIds = encodeText(reply);
  const stops = typeof body.stop === 'string' ? [body.stop] : (body.stop ?? []);
  const plan: SequencePlan = {
    promptTokens,
    promptTokenIds: prompt,
    outputTokenIds,
    maxTokens: maxTokensFor(ctx, body, promptTokens),
    stop: findStopPoint(outputTokenIds, stops, body.include_stop_str_in_output === true),
    holdBackChars: stopHoldBackChars(stops, body.include_stop_str_in_output === true),
  };
  const ident = newCompletionIdentity(body.model ?? ctx.modelName);
  // vLLM runs its tool parser for `tool_choice: "auto"`, the default once `tools` are given.
  // "required" and a named function (structured output there) are parsed the same way here.
  const parsesToolCalls = ctx.toolCallParser !== undefined && (body.tools?.length ?? 0) > 0 && body.tool_choice !== 'none';

  if (body.stream) {
    // vLLM's StreamOptions.include_usage defaults to true once stream_options is given.
    const includeUsage = body.stream_options != null && body.stream_options.include_usage !== false;
    const writer = new ChatStreamWriter(res, ident, {
      promptTokens,
      includeUsage,
      continuousUsage: includeUsage && body.stream_options?.continuous_usage_stats === true,
      toolCalls: parsesToolCalls ? toolCallsStream(reply) : undefined,
    });
    writer.open();
    const handle = ctx.engine.submit(plan, { onToken: (e) => writer.token(e), onAborted: () => res.destroy() });
    res.on('close', () => {
      if (!writer.finished) handle.abort();
    });
    return;
  }

  let text = '';
  const handle = ctx.engine.submit(plan, {
    onToken(event) {
      text += event.text;
      if (event.finishReason === null) return;
      // Parsed from the text as generated: a reply cut inside its calls is no valid list, and vLLM returns it as content.
      const found = parsesToolCalls ? messageToolCalls(text) : undefined;
      const totals = usage(promptTokens, event.completionTokens);
      if (found) sendJson(res, 200, chatCompletion(ident, found, 'tool_calls', totals, event.stopReason));
      else sendJson(res, 200, chatCompletion(ident, { content: text }, event.finishReason, totals, event.stopReason));
    },
    onAborted: () => res.destroy(),
  });
  res.on('close', () => {
    if (!res.writableEnded) handle.abort();
  });
}
