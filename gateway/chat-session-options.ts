import type { ToolPlugin } from '../plugins/plugin-types.ts';
import type { ChatMessage, ChatRequest } from './chat-request-schema.ts';
import type { ClientKeyId } from './client-auth.ts';
import { withThinkingInContent } from './client-reasoning.ts';
import { ClientToolValidator } from './client-tool-validator.ts';
import type { GatewayConfig } from './config.ts';
import { withMistralToolCallIds } from './mistral-tool-call-ids.ts';
import { buildParser, lineFieldsOf, needsSpecialTokens, PASS_THROUGH, type ParserChoice } from './parser-selection.ts';
import type { SessionOptions, UpstreamTarget } from './session.ts';
import type { Timeline } from './timeline.ts';

const NO_TOOLS: ReadonlyMap<string, ToolPlugin> = new Map();

/** What the chat route settled for one admitted request, from which its session's options follow. */
export interface ChatSessionInputs {
  config: GatewayConfig;
  upstream: UpstreamTarget;
  request: ChatRequest;
  /** The gateway's tools this request may call (request-tools.ts). */
  gatewayTools: ReadonlyMap<string, ToolPlugin>;
  /** The parser the model's name (or the request's tool_parser) chose. */
  parsed: ParserChoice;
  partialExecution: boolean;
  timeline: Timeline;
  /** The request's one abort signal (the client's leaving, a shutdown's end). */
  signal: AbortSignal;
  clientKey: ClientKeyId;
}

/**
 * The session's options for a checked request, less how its events leave (a stream or one body):
 * which parser reads the model, which tools run, what goes upstream beside the client's body.
 */
export function chatSessionOptions({ config, upstream, request, gatewayTools, parsed, partialExecution, timeline, signal, clientKey }: ChatSessionInputs): Omit<SessionOptions, 'onEvent'> {
  const id = timeline.requestId;
  // tool_choice "none": the model is not to call anything, so nothing it writes is taken for a call
  // (vLLM parses none then either) and no gateway tool runs; its text is the answer. A <think>
  // block is still reasoning. OpenAI's deprecated `function_call: "none"` says the same for a
  // request that gives no tool_choice (LangChain's openai-functions agents send it).
  const noCalls = (request.tool_choice ?? (request as { function_call?: unknown }).function_call) === 'none';
  // Part of the request id in every call id, so the calls of two turns never share one.
  const callIdPrefix = (round: number) => `call_${id.slice(-8)}_r${round}_`;
  const choice: ParserChoice = noCalls ? { ...parsed, format: PASS_THROUGH } : parsed;
  // Pass-through (tool_parser "none" too) runs no tool: a call an upstream parser sent as
  // delta.tool_calls goes to the client as it came, as it would without the gateway.
  const tools = choice.format === PASS_THROUGH ? NO_TOOLS : gatewayTools;
  const offered = (name: string) => tools.has(name) || (request.tools ?? []).some((tool) => tool.function?.name === name);
  // The parser reads parameter types from function tools; another type (OpenAI's `custom`) is the upstream's alone.
  const functionTools = request.tools?.filter((tool) => tool.type === 'function' && tool.function !== undefined);
  const pythonTool = offered('python');
  const planTool = offered('plan');
  return {
    request,
    upstream,
    upstreamOverrides: needsSpecialTokens(choice.format) && request.skip_special_tokens === undefined ? { skip_special_tokens: false } : {},
    // By the model's format, not this request's choice: a history with calls reaches the template even under tool_choice "none".
    upstreamMessages: upstreamConversation(parsed.format === 'mistral', choice.reasoning),
    tools,
    observations: config.observations,
    maxObservationChars: config.maxObservationChars,
    createParser: (round: number) => buildParser(choice, config, { callIdPrefix: callIdPrefix(round), requestTools: functionTools, lineFields: lineFieldsOf(tools), pythonTool, planTool }),
    thinkTags: choice.reasoning,
    callIdPrefix,
    partialExecution,
    maxRounds: request.max_tool_rounds ?? config.maxToolRounds,
    maxCallsPerRound: config.maxToolCallsPerRound,
    onToolReject: request.on_tool_reject ?? config.onToolReject,
    clientToolValidator: request.validate_tool_arguments && request.tools ? new ClientToolValidator(request.tools) : undefined,
    passThrough: choice.format === PASS_THROUGH,
    timeline,
    signal,
    clientKey,
  };
}

/** How the conversation is rewritten for the upstream, if at all: Mistral's nine-character call ids, a client's reasoning back in `<think>` blocks. */
function upstreamConversation(mistralIds: boolean, thinkTags: boolean): ((messages: ChatMessage[]) => ChatMessage[]) | undefined {
  if (mistralIds && thinkTags) return (messages) => withMistralToolCallIds(withThinkingInContent(messages));
  if (mistralIds) return withMistralToolCallIds;
  return thinkTags ? withThinkingInContent : undefined;
}
