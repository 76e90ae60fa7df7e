import type { ChatMessage } from './chat-request-schema.ts';
import type { ClientToolCall } from './client-calls.ts';
import type { CallOutcome } from './dispatcher.ts';

/** A round that called tools, as the conversation goes on: its assistant turn and the tools' results. */
export function roundMessages(text: string, calls: CallOutcome[], clientCalls: ClientToolCall[], observations: 'tool' | 'user'): ChatMessage[] {
  if (observations === 'user' && clientCalls.length === 0) {
    const results = calls.map((c) => `The ${c.name} tool returned:\n${c.result.content}`).join('\n\n');
    return [{ role: 'assistant', content: text }, { role: 'user', content: results }];
  }
  return [assistantTurn(text, calls, clientCalls), ...calls.map(toolMessage)];
}

function assistantTurn(text: string, calls: CallOutcome[], clientCalls: ClientToolCall[]): ChatMessage {
  return {
    role: 'assistant',
    // A turn that only called tools has no text: null, as OpenAI writes it (and as the response's
    // own `message.content` reads for the same turn), not "".
    content: text === '' ? null : text,
    tool_calls: [
      ...calls.map((c) => ({ id: c.callId, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.args) } })),
      ...clientCalls.map((c) => ({ ...c })),
    ],
  };
}

function toolMessage(call: CallOutcome): ChatMessage {
  return { role: 'tool', tool_call_id: call.callId, content: call.result.content };
}
