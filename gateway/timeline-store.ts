import type { Timeline } from './timeline.ts';

/** Keeps the most recent timelines (bounded: a busy gateway must not grow without limit). */
export class TimelineStore {
  private readonly capacity: number;
  private readonly byId = new Map<string, Timeline>();
  constructor(capacity = 1000) {
    this.capacity = capacity;
  }

  add(timeline: Timeline): void {
    this.byId.set(timeline.requestId, timeline);
    if (this.byId.size > this.capacity) {
      const oldest = this.byId.keys().next().value;
      if (oldest !== undefined) this.byId.delete(oldest);
    }
  }

  get(id: string): Timeline | undefined {
    return this.byId.get(id);
  }
}
