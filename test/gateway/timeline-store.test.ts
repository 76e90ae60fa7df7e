import { describe, expect, it } from 'vitest';
import type { ClientKeyId } from '../../gateway/client-auth.ts';
import { Timeline } from '../../gateway/timeline.ts';
import { TimelineStore } from '../../gateway/timeline-store.ts';

const A = 'key-a' as ClientKeyId;
const B = 'key-b' as ClientKeyId;

function ended(id: string): Timeline {
  const timeline = new Timeline(id);
  timeline.mark('request-end', { detail: 'answer' });
  return timeline;
}

describe('TimelineStore', () => {
  it('keeps the most recent timelines, each for its own key only', () => {
    const store = new TimelineStore(3);
    for (const id of ['r1', 'r2', 'r3', 'r4']) store.add(ended(id), A);
    expect(store.get('r1', A)).toBeUndefined();
    expect(store.get('r4', A)?.requestId).toBe('r4');
    expect(store.get('r4', B)).toBeUndefined();
    expect(store.size).toBe(3);
  });

  it("makes a key that sends many requests evict its own timelines, not another key's", () => {
    const store = new TimelineStore(10);
    store.add(ended('a-1'), A);
    for (let i = 0; i < 1000; i++) store.add(ended(`b-${i}`), B);
    expect(store.get('a-1', A)?.requestId).toBe('a-1');
    expect(store.get('b-999', B)?.requestId).toBe('b-999');
    expect(store.get('b-0', B)).toBeUndefined();
    expect(store.size).toBe(10);
  });

  it('keeps a running request\'s timeline while an ended one of the same key can go instead', () => {
    const store = new TimelineStore(3);
    const running = new Timeline('running');
    store.add(running, A);
    for (const id of ['e1', 'e2', 'e3', 'e4']) store.add(ended(id), A);
    expect(store.get('running', A)).toBe(running);
    expect(store.get('e4', A)).toBeDefined();
    expect(store.get('e1', A)).toBeUndefined();
  });

  it('bounds the events of all kept timelines together, not only their count', () => {
    const store = new TimelineStore(100, 1000);
    for (let i = 0; i < 10; i++) {
      const long = new Timeline(`long-${i}`);
      for (let j = 0; j < 298; j++) long.mark('piece', { round: 1 });
      long.mark('request-end', { detail: 'answer' });
      store.add(long, A);
    }
    // 300 events each: three fit under 1,000.
    expect(store.size).toBe(3);
    expect(store.get('long-9', A)).toBeDefined();
    expect(store.get('long-6', A)).toBeUndefined();
  });
});
