import type { ClientKeyId } from './client-auth.ts';
import type { Timeline } from './timeline.ts';

/**
 * Keeps the most recent timelines (bounded: a busy gateway must not grow without limit), each
 * readable with the API key its request came with: another key's request is not found, as if it
 * had never been (its id is no secret once logged or quoted in a support ticket; what its tools
 * did is).
 */
export class TimelineStore {
  private readonly capacity: number;
  private readonly byId = new Map<string, { timeline: Timeline; key: ClientKeyId }>();
  constructor(capacity = 1000) {
    this.capacity = capacity;
  }

  add(timeline: Timeline, key: ClientKeyId = undefined): void {
    this.byId.set(timeline.requestId, { timeline, key });
    if (this.byId.size > this.capacity) {
      const oldest = this.byId.keys().next().value;
      if (oldest !== undefined) this.byId.delete(oldest);
    }
  }

  /** The timeline of request `id`, if it is recent and was made with `key`. */
  get(id: string, key: ClientKeyId = undefined): Timeline | undefined {
    const kept = this.byId.get(id);
    return kept !== undefined && kept.key === key ? kept.timeline : undefined;
  }
}
