import type { ChatMessage, ChatRequest } from './chat-request-schema.ts';

/**
 * The upstream prompt of a round: the client's messages, then the turns the gateway appended. Under vLLM's prefill (`continue_final_message`) the client's last message is
 * the start of the assistant's reply and round 1 wrote the rest of it: they are one turn, as the
 * model wrote them, not the client's half and a second assistant turn (which templates that
 * require alternating roles refuse, and which no model wrote).
 */
export function roundPrompt(request: ChatRequest, appended: readonly ChatMessage[]): ChatMessage[] {
  const start = request.messages.at(-1);
  const turns = modelTurns(request, appended);
  const reply = turns[0];
  const prefill = (request as { continue_final_message?: unknown }).continue_final_message === true;
  if (prefill && reply?.role === 'assistant' && start?.role === 'assistant' && typeof start.content === 'string') {
    const rest = typeof reply.content === 'string' ? reply.content : '';
    return [...request.messages.slice(0, -1), { ...start, ...reply, content: start.content + rest }, ...turns.slice(1)];
  }
  return [...request.messages, ...turns];
}

/**
 * The turns the gateway appended, as the model wrote them. With vLLM's `echo`, round 1's text
 * opened with the client's last message: the model never wrote it, and kept there the turn read
 * "I willI will look it up." in the next prompt (a prefill), or put the client's question in the
 * model's mouth (the generation prompt off), there and in the `conveyor.messages` a client appends
 * to its conversation. The answer's own text keeps the echo, as vLLM's does.
 */
export function modelTurns(request: ChatRequest, appended: readonly ChatMessage[]): ChatMessage[] {
  const reply = appended[0];
  const echo = echoedText(request);
  if (reply?.role !== 'assistant' || typeof reply.content !== 'string' || !echo || !reply.content.startsWith(echo)) return [...appended];
  const rest = reply.content.slice(echo.length);
  // What is left of a turn that only called tools reads as roundMessages writes one: null.
  const content = rest.trim() === '' && (reply.tool_calls?.length ?? 0) > 0 ? null : rest;
  return [{ ...reply, content }, ...appended.slice(1)];
}

/**
 * What vLLM's chat `echo` puts before round 1's reply (serving_chat): the last message's content,
 * when that message has the reply's role, which is "assistant" under the generation prompt and the
 * last message's own role without it. Text parts are joined with "\n", as vLLM's conversation does.
 */
function echoedText(request: ChatRequest): string | undefined {
  const last = request.messages.at(-1);
  if ((request as { echo?: unknown }).echo !== true || last === undefined) return undefined;
  const generates = (request as { add_generation_prompt?: unknown }).add_generation_prompt !== false;
  if (generates && last.role !== 'assistant') return undefined;
  const content = last.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  return content.flatMap((part) => (typeof part['text'] === 'string' && part['text'] !== '' ? [part['text']] : [])).join('\n');
}
