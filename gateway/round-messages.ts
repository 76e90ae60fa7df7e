import type { ReasoningField } from '../llm-client/upstream-parts.ts';
import type { ChatMessage } from './chat-request-schema.ts';
import type { ClientToolCall } from './client-calls.ts';
import type { CallOutcome } from './dispatched-call.ts';
import type { RoundOutput } from './session-round.ts';

type ToolCallEntry = NonNullable<Extract<ChatMessage, { role: 'assistant' }>['tool_calls']>[number];

/**
 * A round that called tools, as the conversation goes on: its assistant turn and the tools' results.
 * The turn lists its calls in the order the model made them, gateway's and client's interleaved as
 * decoded: the next round's prompt then reads as the model wrote it (its prefix cache holds), and a
 * client sees the calls in the order they were streamed.
 */
export function roundMessages(round: Pick<RoundOutput, 'text' | 'reasoning' | 'calls' | 'clientCalls' | 'callOrder'>, observations: 'tool' | 'user'): ChatMessage[] {
  const { text, clientCalls, reasoning } = round;
  const calls = inCallOrder(round.calls, (c) => c.callId, round.callOrder);
  if (observations === 'user' && clientCalls.length === 0) {
    const results = calls.map((c) => `The ${c.name} tool returned:\n${c.result.content}`).join('\n\n');
    return [{ role: 'assistant', content: withThinking(text, reasoning), ...reasoningField(reasoning) }, { role: 'user', content: results }];
  }
  const entries: Array<{ id: string; entry: ToolCallEntry }> = [
    ...calls.map((c) => ({ id: c.callId, entry: { id: c.callId, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.args) } } })),
    ...clientCalls.map((c: ClientToolCall) => ({ id: c.id, entry: { ...c } })),
  ];
  const assistant: ChatMessage = {
    role: 'assistant',
    // A turn that only called tools has no text: null, as OpenAI writes it (and as the response's
    // own `message.content` reads for the same turn), not "" nor the whitespace between its calls.
    content: text.trim() === '' && reasoning?.in !== 'think-tags' ? null : withThinking(text, reasoning),
    ...reasoningField(reasoning),
    tool_calls: inCallOrder(entries, (e) => e.id, round.callOrder).map((e) => e.entry),
  };
  return [assistant, ...calls.map(toolMessage)];
}

/**
 * A round's reasoning goes back with its turn, as the upstream gave it: a thinking model's chat
 * template shows the next round the reasoning of the turns since the last user message (Qwen3's
 * does; DeepSeek-R1's drops it), and without it the model rethinks from scratch and the prompt
 * parts from the upstream's prefix cache at that turn. A `<think>` model's reasoning goes back
 * between the markers the model wrote it in, which the templates split off again, whether the
 * gateway parsed it out of the text or an upstream parser sent it in a field; any other model's
 * (gpt-oss) goes back in the field it came in.
 */
export interface RoundReasoning {
  text: string;
  in: 'think-tags' | ReasoningField;
}

function withThinking(text: string, reasoning: RoundReasoning | undefined): string {
  return reasoning?.in === 'think-tags' ? `<think>${reasoning.text}</think>${text}` : text;
}

function reasoningField(reasoning: RoundReasoning | undefined): Record<string, string> {
  return reasoning && reasoning.in !== 'think-tags' ? { [reasoning.in]: reasoning.text } : {};
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
