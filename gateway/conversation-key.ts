import { createHash } from 'node:crypto';
import type { ChatRequest } from './chat-request-schema.ts';

/**
 * A conversation's identity across a client's turns: its model and its messages up to and
 * including the first user message, which every later turn resends unchanged. Two conversations
 * that open alike share a key, and a replica, which suits a prefix cache as well: that opening is
 * cached there. Undefined without a user message (nothing to recognise a next turn by).
 */
export function conversationKey(request: Pick<ChatRequest, 'model' | 'messages'>): string | undefined {
  const firstUser = request.messages.findIndex((m) => m.role === 'user');
  if (firstUser < 0) return undefined;
  // Only role and content: a client may drop a `name` or reorder keys between turns.
  const opening = request.messages.slice(0, firstUser + 1).map((m) => [m.role, m.content ?? null]);
  return createHash('sha256').update(JSON.stringify([request.model, opening])).digest('base64url');
}
