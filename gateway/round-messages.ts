import type { ChatMessage } from './chat-request-schema.ts';
import type { ClientToolCall } from './client-calls.ts';
import type { CallOutcome } from './dispatcher.ts';
import type { RoundOutput } from './session-round.ts';

type ToolCallEntry = NonNullable<Extract<ChatMessage, { role: 'assistant' }>['tool_calls']>[number];

/**
 * A round that called tools, as the conversation goes on: its assistant turn and the tools' results.
 * The turn lists its calls in the order the model made them, gateway's and client's interleaved as
 * decoded: the next round's prompt then reads as the model wrote it (its prefix cache holds), and a
 * client sees the calls in the order they were streamed.
 */
export function roundMessages(round: Pick<RoundOutput, 'text' | 'calls' | 'clientCalls' | 'callOrder'>, observations: 'tool' | 'user'): ChatMessage[] {
  const { text, clientCalls } = round;
  const calls = inCallOrder(round.calls, (c) => c.callId, round.callOrder);
  if (observations === 'user' && clientCalls.length === 0) {
    const results = calls.map((c) => `The ${c.name} tool returned:\n${c.result.content}`).join('\n\n');
    return [{ role: 'assistant', content: text }, { role: 'user', content: results }];
  }
  const entries: Array<{ id: string; entry: ToolCallEntry }> = [
    ...calls.map((c) => ({ id: c.callId, entry: { id: c.callId, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.args) } } })),
    ...clientCalls.map((c: ClientToolCall) => ({ id: c.id, entry: { ...c } })),
  ];
  const assistant: ChatMessage = {
    role: 'assistant',
    // A turn that only called tools has no text: null, as OpenAI writes it (and as the response's
    // own `message.content` reads for the same turn), not "" nor the whitespace between its calls.
    content: text.trim() === '' ? null : text,
    tool_calls: inCallOrder(entries, (e) => e.id, round.callOrder).map((e) => e.entry),
  };
  return [assistant, ...calls.map(toolMessage)];
}

/** `items` sorted by where their id stands in `order`; one not in it keeps its place after those that are. */
function inCallOrder<T>(items: readonly T[], idOf: (item: T) => string, order: readonly string[]): T[] {
  const rank = new Map(order.map((id, i) => [id, i]));
  return items
    .map((item, i) => ({ item, key: rank.get(idOf(item)) ?? order.length + i }))
    .sort((a, b) => a.key - b.key)
    .map((r) => r.item);
}

function toolMessage(call: CallOutcome): ChatMessage {
  return { role: 'tool', tool_call_id: call.callId, content: call.result.content };
}
