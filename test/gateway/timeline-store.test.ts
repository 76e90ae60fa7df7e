import fc from 'fast-check';
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

  it('counts the events a kept timeline marks after it was added, after its end too', () => {
    const store = new TimelineStore(100, 10);
    const first = ended('first');
    store.add(first, A);
    for (let i = 0; i < 5; i++) first.mark('tool-end', { round: 1 });
    store.add(ended('second'), A);
    // 2 + 5 + 2 events: both fit; two more after the end of `first` push it out at the next add.
    expect(store.size).toBe(2);
    first.mark('tool-end', { round: 1 });
    first.mark('tool-end', { round: 1 });
    store.add(ended('third'), A);
    expect(store.get('first', A)).toBeUndefined();
    expect(store.get('third', A)).toBeDefined();
  });

  it('keeps and evicts exactly as recounting every kept timeline on each add would', () => {
    const keys = [undefined, A, B, 'key-c' as ClientKeyId];
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), id: fc.integer({ min: 0, max: 11 }), key: fc.integer({ min: 0, max: 3 }), end: fc.boolean() }),
      fc.record({ kind: fc.constant('mark' as const), id: fc.integer({ min: 0, max: 11 }), n: fc.integer({ min: 1, max: 6 }), end: fc.boolean() }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 40 }), fc.array(op, { maxLength: 60 }), (capacity, maxEvents, ops) => {
        const store = new TimelineStore(capacity, maxEvents);
        const model = new RecountingStore(capacity, maxEvents);
        const latest = new Map<string, Timeline>();
        for (const o of ops) {
          const id = `r${o.id}`;
          if (o.kind === 'add') {
            const timeline = o.end ? ended(id) : new Timeline(id);
            latest.set(id, timeline);
            store.add(timeline, keys[o.key]);
            model.add(timeline, keys[o.key]);
          } else {
            const timeline = latest.get(id);
            if (!timeline) continue;
            for (let i = 0; i < o.n; i++) timeline.mark('piece', { round: 1 });
            if (o.end) timeline.mark('request-end', { detail: 'answer' });
          }
          expect(store.size).toBe(model.size);
          for (const [known] of latest) for (const key of keys) expect(store.get(known, key)).toBe(model.get(known, key));
        }
      }),
    );
  });
});

/** The store as it was: every add recounts the kept timelines' events and the timelines per key. */
class RecountingStore {
  private readonly byId = new Map<string, { timeline: Timeline; key: ClientKeyId }>();
  private readonly capacity: number;
  private readonly maxEvents: number;

  constructor(capacity: number, maxEvents: number) {
    this.capacity = capacity;
    this.maxEvents = maxEvents;
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string, key: ClientKeyId): Timeline | undefined {
    const kept = this.byId.get(id);
    return kept !== undefined && kept.key === key ? kept.timeline : undefined;
  }

  add(timeline: Timeline, key: ClientKeyId): void {
    this.byId.delete(timeline.requestId);
    this.byId.set(timeline.requestId, { timeline, key });
    let events = 0;
    for (const kept of this.byId.values()) events += kept.timeline.events.length;
    while (this.byId.size > 1 && (this.byId.size > this.capacity || events > this.maxEvents)) {
      const evicted = this.evictOne(timeline.requestId);
      if (evicted === undefined) break;
      events -= evicted.events.length;
    }
  }

  private evictOne(spare: string): Timeline | undefined {
    const counts = new Map<ClientKeyId, number>();
    let heaviest: ClientKeyId;
    let most = 0;
    for (const { key } of this.byId.values()) {
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      if (count > most) [heaviest, most] = [key, count];
    }
    let victim: string | undefined;
    for (const [id, kept] of this.byId) {
      if (id === spare || kept.key !== heaviest!) continue;
      victim ??= id;
      if (kept.timeline.ended) {
        victim = id;
        break;
      }
    }
    victim ??= [...this.byId.keys()].find((id) => id !== spare);
    if (victim === undefined) return undefined;
    const { timeline } = this.byId.get(victim)!;
    this.byId.delete(victim);
    return timeline;
  }
}
