import type { IncomingMessage, ServerResponse } from 'node:http';
import { echoPrefix } from './chat-echo.ts';
import { responseRole } from './chat-response-role.ts';
import { chatCompletion, clientRequestId, finalUsage, newCompletionIdentity } from './chat-completion-shapes.ts';
import { promptTokenIds } from './chat-prompt.ts';
import { chatCompletionRequestSchema, isNamedToolChoice, type ChatCompletionRequest } from './chat-request-schema.ts';
import { ChatStreamWriter } from './chat-stream-writer.ts';
import { sendErrorFor } from './error-response.ts';
import { sendJson } from './json-response.ts';
import { encodeText } from './mistral-tokenizer.ts';
import { layoutToolCalls, messageToolCalls, ToolCallsStream } from './mistral-tool-calls.ts';
import { readJsonRequest } from './json-request.ts';
import { playStreamed, playWhole } from './play-sequence.ts';
import { truncatePrompt } from './prompt-truncation.ts';
import { ReasoningStream, splitWholeReply } from './reasoning-split.ts';
import { responseModelName, selectScenario, sequencePlan } from './request-plan.ts';
import { usageOptions } from './sampling-request-fields.ts';
import type { SimContext } from './sim-context.ts';

/** POST /v1/chat/completions: validate, pick the reply, and play it through the engine loop. */
export async function handleChatCompletions(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJsonRequest(req, res, chatCompletionRequestSchema);
  if (body === undefined) return;
  try {
    startCompletion(ctx, body, res, clientRequestId(req, body));
  } catch (err) {
    sendErrorFor(res, err);
  }
}

function toolCallsStream(reply: string): ToolCallsStream | undefined {
  const layout = layoutToolCalls(reply);
  return layout && new ToolCallsStream(layout);
}

function startCompletion(ctx: SimContext, body: ChatCompletionRequest, res: ServerResponse, requestId: string | undefined): void {
  const selected = selectScenario(ctx, body);
  const prompt = truncatePrompt(promptTokenIds(body.messages, body.tools), body.truncate_prompt_tokens, ctx.engine.profile.maxModelLen);
  const promptTokens = prompt.length;
  const reply = ctx.scenarios.reply(body.messages, selected).text;
  const plan = sequencePlan(ctx, body, { promptTokenIds: prompt, outputTokenIds: encodeText(reply), inputField: 'messages' });
  const ident = newCompletionIdentity(responseModelName(ctx, body.model), requestId);
  // vLLM runs its tool parser for `tool_choice: "auto"`, the default once `tools` are given.
  // "required" and a named function (structured output there) are parsed the same way here.
  const parsesToolCalls = ctx.toolCallParser !== undefined && (body.tools?.length ?? 0) > 0 && body.tool_choice !== 'none';
  // vLLM's serving_chat, after OpenAI: "tool_calls" for auto (and required) tool calls; a named
  // tool_choice keeps the engine's own reason ("stop", or "length").
  const finishWithToolCalls = !isNamedToolChoice(body.tool_choice);
  const returnTokenIds = body.return_token_ids === true ? prompt : undefined;
  const echo = echoPrefix(body);
  const role = responseRole(body);

  if (body.stream) {
    // The reasoning parser runs first; the tool parser reads only what it leaves as content.
    const reasoning = ctx.reasoningParser && new ReasoningStream(reply, ctx.reasoningParser);
    const toolCalls = parsesToolCalls ? toolCallsStream(reasoning ? reasoning.content : reply) : undefined;
    const options = { promptTokens, ...usageOptions(body.stream_options), reasoning, toolCalls, finishWithToolCalls, promptTokensDetails: ctx.promptTokensDetails, returnTokenIds, echo, role };
    const writer = new ChatStreamWriter(res, ident, options);
    return playStreamed(ctx, plan, res, writer);
  }
  playWhole(ctx, plan, res, (text, last, tokenIds) => {
    const ids = returnTokenIds && { prompt: returnTokenIds, generated: tokenIds };
    const { reasoning, content } = ctx.reasoningParser ? splitWholeReply(text, ctx.reasoningParser) : { reasoning: null, content: text };
    // Parsed from the text as generated: a reply cut inside its calls is no valid list, and vLLM returns it as content.
    const found = parsesToolCalls ? messageToolCalls(content) : undefined;
    const totals = finalUsage(promptTokens, last.completionTokens, last.cachedTokens, ctx.promptTokensDetails);
    // vLLM's echo prefixes whatever content the parsers left, a null one included ("" + None → the echo).
    const echoed = (text: string | null) => (echo === undefined ? text : echo + (text ?? ''));
    if (found) sendJson(res, 200, chatCompletion(ident, { ...found, content: echoed(found.content), reasoning, role }, finishWithToolCalls ? 'tool_calls' : last.finishReason, totals, last.stopReason, ids));
    else sendJson(res, 200, chatCompletion(ident, { content: echoed(ctx.reasoningParser && content === '' ? null : content), reasoning, role }, last.finishReason, totals, last.stopReason, ids));
  });
}
