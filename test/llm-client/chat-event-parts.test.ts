import { describe, expect, it } from 'vitest';
import { chatEventKind } from '../../llm-client/chat-event-parts.ts';

const event = (data: string, name?: string) => ({ data, event: name, id: undefined });

describe('chatEventKind', () => {
  it.each([
    ['[DONE]', undefined, 'done'],
    ['[DONE] ', undefined, 'done'],
    ['{"choices":[]}', undefined, 'chunk'],
    ['{"choices":[]}', 'message', 'chunk'],
    // An unnamed event that is not JSON is left to fail its decode: a broken upstream.
    ['ping', undefined, 'chunk'],
    ['', undefined, 'keep-alive'],
    ['  ', 'message', 'keep-alive'],
    ['ping', 'ping', 'keep-alive'],
    ['{"type":"keepalive"}', 'keepalive', 'keep-alive'],
    ['{"error":{"message":"x"}}', 'error', 'error'],
    ['', 'error', 'error'],
  ])('reads data %j named %s as %s', (data, name, kind) => {
    expect(chatEventKind(event(data, name))).toBe(kind);
  });
});
