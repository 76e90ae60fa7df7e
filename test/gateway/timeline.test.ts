import { describe, expect, it } from 'vitest';
import { MAX_KEPT_EVENTS, Timeline } from '../../gateway/timeline.ts';

describe('Timeline', () => {
  it('stops storing per-token events past its bound, counts them, and still keeps every structural event and tells followers all', () => {
    const timeline = new Timeline('chatcmpl-long');
    const followed: string[] = [];
    timeline.subscribe((e) => followed.push(e.type));
    timeline.mark('round-start', { round: 1 });
    for (let i = 0; i < MAX_KEPT_EVENTS + 100; i++) {
      timeline.mark('client-paused', { round: 1 });
      timeline.mark('client-resumed', { round: 1 });
    }
    timeline.mark('decode-end', { round: 1 });
    timeline.mark('request-end', { detail: 'answer' });
    expect(timeline.events).toHaveLength(MAX_KEPT_EVENTS + 2);
    expect(timeline.events.at(-2)?.type).toBe('decode-end');
    expect(timeline.ended).toBe(true);
    const json = timeline.toJSON();
    expect(json.events_not_kept).toBe(2 * (MAX_KEPT_EVENTS + 100) - (MAX_KEPT_EVENTS - 2));
    expect(followed).toHaveLength(2 * (MAX_KEPT_EVENTS + 100) + 3);
  });

  it('says nothing of events not kept when all were', () => {
    const timeline = new Timeline('chatcmpl-short');
    timeline.mark('request-end', { detail: 'answer' });
    expect(timeline.toJSON()).not.toHaveProperty('events_not_kept');
  });
});
