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
  /** Its events as last counted into the store's total. */
  counted: number;
  unsubscribe: () => void;
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
  /**
   * The events of all kept timelines, kept up to date as they grow (each kept timeline is
   * followed), and the timelines kept per key: every request adds a timeline, and summing or
   * counting all 1,000 kept ones on each add cost ~30-60 µs of the request's CPU (bench/overhead).
   */
  private events = 0;
  private readonly perKey = new Map<ClientKeyId, number>();

  constructor(capacity = MAX_KEPT_TIMELINES, maxEvents = MAX_KEPT_EVENTS_IN_ALL) {
    this.capacity = capacity;
    this.maxEvents = maxEvents;
  }

  add(timeline: Timeline, key: ClientKeyId = undefined): void {
    const before = this.byId.get(timeline.requestId);
    if (before !== undefined) this.drop(timeline.requestId, before);
    const kept: Kept = { timeline, key, counted: timeline.events.length, unsubscribe: () => {} };
    kept.unsubscribe = timeline.subscribe(() => {
      this.events += timeline.events.length - kept.counted;
      kept.counted = timeline.events.length;
    });
    this.byId.set(timeline.requestId, kept);
    this.events += kept.counted;
    this.perKey.set(key, (this.perKey.get(key) ?? 0) + 1);
    while (this.byId.size > 1 && (this.byId.size > this.capacity || this.events > this.maxEvents)) {
      if (!this.evictOne(timeline.requestId)) break;
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

  /** Drops one timeline of the key holding the most, never `spare` (the one just added); false when none can go. */
  private evictOne(spare: string): boolean {
    const heaviest = this.heaviestKey();
    let victim: string | undefined;
    for (const [id, kept] of this.byId) {
      if (id === spare || kept.key !== heaviest) continue;
      victim ??= id;
      if (kept.timeline.ended) {
        victim = id;
        break;
      }
    }
    // The heaviest key's only timeline is the one just added: take anyone's oldest.
    victim ??= [...this.byId.keys()].find((id) => id !== spare);
    if (victim === undefined) return false;
    this.drop(victim, this.byId.get(victim)!);
    return true;
  }

  /**
   * The key holding the most timelines; of keys holding as many, the one whose newest kept
   * timeline is the oldest (the first to reach that count, oldest first).
   */
  private heaviestKey(): ClientKeyId {
    let heaviest: ClientKeyId;
    let most = 0;
    let tied = false;
    for (const [key, count] of this.perKey) {
      if (count === most) tied = true;
      else if (count > most) [heaviest, most, tied] = [key, count, false];
    }
    if (!tied) return heaviest!;
    const counts = new Map<ClientKeyId, number>();
    for (const { key } of this.byId.values()) {
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      if (count === most) return key;
    }
    return heaviest!;
  }

  private drop(id: string, kept: Kept): void {
    kept.unsubscribe();
    this.byId.delete(id);
    this.events -= kept.counted;
    const count = this.perKey.get(kept.key)! - 1;
    if (count === 0) this.perKey.delete(kept.key);
    else this.perKey.set(kept.key, count);
  }
}
