import type { ClientKeyId } from './client-auth.ts';
import type { Timeline } from './timeline.ts';

/** How many timelines are kept, all keys together. */
export const MAX_KEPT_TIMELINES = 1000;
/**
 * The events kept in all timelines together. A timeline keeps up to MAX_KEPT_EVENTS (5,000), about
 * 700 bytes each on the heap: 1,000 long ones would hold ~0.7 GiB. This bounds the store at ~170 MiB;
 * a typical request has tens of events, so it only bites when many long answers are kept.
 */
export const MAX_KEPT_EVENTS_IN_ALL = 250_000;

interface Kept {
  timeline: Timeline;
  key: ClientKeyId;
}

/**
 * Keeps the most recent timelines (bounded in count and in events: a busy gateway must not grow
 * without limit), each readable with the API key its request came with: another key's request is
 * not found, as if it had never been (its id is no secret once logged or quoted in a support
 * ticket; what its tools did is).
 *
 * When over a bound, the key that holds the most timelines gives one up, its oldest that has
 * ended (its oldest if none has): one key sending many requests (or many bad ones, which get
 * timelines too) evicts its own, not another key's, and a request still running keeps its timeline
 * while any ended one is left to give.
 */
export class TimelineStore {
  private readonly capacity: number;
  private readonly maxEvents: number;
  private readonly byId = new Map<string, Kept>();

  constructor(capacity = MAX_KEPT_TIMELINES, maxEvents = MAX_KEPT_EVENTS_IN_ALL) {
    this.capacity = capacity;
    this.maxEvents = maxEvents;
  }

  add(timeline: Timeline, key: ClientKeyId = undefined): void {
    this.byId.delete(timeline.requestId);
    this.byId.set(timeline.requestId, { timeline, key });
    // The events are counted once per add: the kept timelines grow after they are added.
    let events = 0;
    for (const kept of this.byId.values()) events += kept.timeline.events.length;
    while (this.byId.size > 1 && (this.byId.size > this.capacity || events > this.maxEvents)) {
      const evicted = this.evictOne(timeline.requestId);
      if (evicted === undefined) break;
      events -= evicted.events.length;
    }
  }

  /** The timeline of request `id`, if it is recent and was made with `key`. */
  get(id: string, key: ClientKeyId = undefined): Timeline | undefined {
    const kept = this.byId.get(id);
    return kept !== undefined && kept.key === key ? kept.timeline : undefined;
  }

  get size(): number {
    return this.byId.size;
  }

  /** Drops one timeline of the key holding the most, never `spare` (the one just added). */
  private evictOne(spare: string): Timeline | undefined {
    // Counted here, where it is needed, rather than kept beside byId in step with it.
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
    // The heaviest key's only timeline is the one just added: take anyone's oldest.
    victim ??= [...this.byId.keys()].find((id) => id !== spare);
    if (victim === undefined) return undefined;
    const { timeline } = this.byId.get(victim)!;
    this.byId.delete(victim);
    return timeline;
  }
}
