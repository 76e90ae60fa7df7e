import { describe, expect, it } from 'vitest';
import { RecentConversations } from '../../llm-client/recent-conversations.ts';

describe('RecentConversations', () => {
  it('remembers the latest replica of each conversation, and forgets the least recently used past its bound', () => {
    const recent = new RecentConversations(2);
    recent.remember('a', 'http://r1/v1');
    recent.remember('b', 'http://r2/v1');
    recent.remember('a', 'http://r2/v1'); // a moved, and is now the most recent
    recent.remember('c', 'http://r1/v1'); // past the bound: b, the least recent, goes
    expect([recent.replicaOf('a'), recent.replicaOf('b'), recent.replicaOf('c')]).toEqual(['http://r2/v1', undefined, 'http://r1/v1']);
    expect(recent.size).toBe(2);
  });
});
