import { createHash } from 'node:crypto';
import type { ChatMessage } from './chat-request-schema.ts';

const MISTRAL_ID = /^[A-Za-z0-9]{9}$/;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * Mistral's chat template refuses a conversation whose tool-call ids are not nine characters
 * ("Tool call IDs should be alphanumeric strings with length 9!", raised inside the Jinja, so vLLM
 * answers 400 for a model it serves with that template). The gateway's own ids
 * (`call_1a2b3c4d_r1_py1`) and OpenAI's (`call_…`, 24 characters and more) are not. A
 * nine-character id passes as it is; any other becomes nine letters and digits of its SHA-256,
 * the same every time: a call and its observation still match, in this round, the next, and the
 * client's next request.
 */
export function mistralToolCallId(id: string): string {
  if (MISTRAL_ID.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += ALPHABET[digest[i]! % ALPHABET.length];
  return out;
}

/** The conversation as sent to a Mistral-format model: every tool-call id, in calls and in observations, as `mistralToolCallId` writes it. */
export function withMistralToolCallIds(messages: ChatMessage[]): ChatMessage[] {
  if (!messages.some((m) => m.role === 'tool' || (m.role === 'assistant' && m.tool_calls?.length))) return messages;
  return messages.map((m) => {
    if (m.role === 'tool') return { ...m, tool_call_id: mistralToolCallId(m.tool_call_id) };
    if (m.role === 'assistant' && m.tool_calls) return { ...m, tool_calls: m.tool_calls.map((c) => ({ ...c, id: mistralToolCallId(c.id) })) };
    return m;
  });
}
