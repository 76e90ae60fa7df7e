// One bar's row of the playground's timeline (GET /). Plain browser JavaScript, no build step.

import { el } from './dom.js';

/** One span's row on the page, made once and patched after (Timeline.draw). */
export class TimelineRow {
  constructor() {
    this.label = el('span', 'label');
    this.bar = el('div', 'bar');
    // The bar's times in text, beside it (under it on a phone): its title showed them only to a
    // mouse, and a screen reader alone had them in text.
    this.times = el('span', 'times');
    const track = el('div', 'track');
    track.append(this.bar);
    this.node = el('div', 'row');
    this.node.append(this.label, track, this.times);
    /** What was last written of each part, so a frame writes only what changed. */
    this.written = new Map();
  }

  set(part, value, write) {
    if (this.written.get(part) === value) return;
    this.written.set(part, value);
    write(value);
  }
}
