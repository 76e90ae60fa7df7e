import type { ChatMessage, ChatRequest } from './chat-request-schema.ts';

/**
 * The upstream prompt of a round: the client's messages, then the turns the gateway appended. Under vLLM's prefill (`continue_final_message`) the client's last message is
 * the start of the assistant's reply and round 1 wrote the rest of it: they are one turn, as the
 * model wrote them, not the client's half and a second assistant turn (which templates that
 * require alternating roles refuse, and which no model wrote).
 */
export function roundPrompt(request: ChatRequest, appended: readonly ChatMessage[]): ChatMessage[] {
  const start = request.messages.at(-1);
  const reply = appended[0];
  const prefill = (request as { continue_final_message?: unknown }).continue_final_message === true;
  if (!prefill || start?.role !== 'assistant' || typeof start.content !== 'string' || reply?.role !== 'assistant') return [...request.messages, ...appended];
  const rest = typeof reply.content === 'string' ? reply.content : '';
  // With vLLM's `echo`, round 1's text opened with the client's start (the last message has the
  // reply's role): joined to it again, the turn read "I willI will look it up.".
  const echoed = (request as { echo?: unknown }).echo === true && rest.startsWith(start.content);
  return [...request.messages.slice(0, -1), { ...start, ...reply, content: echoed ? rest : start.content + rest }, ...appended.slice(1)];
}
