import { describe, expect, it } from 'vitest';
import { conversationKey } from '../../gateway/conversation-key.ts';
import type { ChatRequest } from '../../gateway/chat-request-schema.ts';

const opening = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Summarise this report: …' },
] as ChatRequest['messages'];

describe('conversationKey', () => {
  it("is the same for a conversation's later turns, which resend its opening", () => {
    const first = conversationKey({ model: 'm', messages: opening });
    const later = conversationKey({
      model: 'm',
      messages: [...opening, { role: 'assistant', content: 'It says revenue grew.' }, { role: 'user', content: 'By how much?' }] as ChatRequest['messages'],
    });
    expect(first).toBeDefined();
    expect(later).toBe(first);
  });

  it('differs for another opening or another model, and needs a user message', () => {
    const key = conversationKey({ model: 'm', messages: opening });
    expect(conversationKey({ model: 'm', messages: [opening[0]!, { role: 'user', content: 'Another report' }] as ChatRequest['messages'] })).not.toBe(key);
    expect(conversationKey({ model: 'other', messages: opening })).not.toBe(key);
    expect(conversationKey({ model: 'm', messages: [opening[0]!] })).toBeUndefined();
  });
});
