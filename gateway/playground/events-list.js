// The playground's tool events list (GET /): one item per event of the chat stream, put on the
// page once a frame, the latest MAX_SHOWN of them kept. Plain browser JavaScript, no build step.

import { el } from './dom.js';

/**
 * Items the list keeps. A tool that prints line by line adds one per output chunk: a script
 * printing for minutes grew the list without bound, and every frame's layout with it.
 */
export const MAX_SHOWN = 2000;

/**
 * Characters of one output chunk its item shows: a script that printed a 100 KB line made one item
 * of it, taller than the list, and results were already cut (at 200). The whole output is the
 * tool's result and the timeline's.
 */
const MAX_OUTPUT_SHOWN = 1000;

/**
 * A `conveyor` event of the chat stream as the list says it, `[text, kind]`; undefined for those it
 * does not show. `name` is how the list names the event's call (EventsList numbers a tool's calls).
 */
export function eventItem(e, name = e.name) {
  switch (e.type) {
    case 'round.started':
      return [`round ${e.round} started`];
    case 'round.finished':
      return [`round ${e.round} finished (${e.finish_reason})`];
    case 'tool_call.started':
      return [`${name} call recognised`, 'tool'];
    case 'tool_call.progress':
      return [`${name}: ${e.detail}`, 'progress'];
    case 'tool_call.output':
      return [`${name} ${e.stream}: ${clip(outputText(e.text), MAX_OUTPUT_SHOWN)}`, 'output'];
    case 'tool_call.completed':
      return [`${name} ${e.ok ? 'done' : 'failed'}: ${clip(String(e.content), 200)}`, e.ok ? 'done' : 'failed'];
    case 'tool_call.cancelled':
      return [`${name} call dropped: ${e.reason}`, 'failed'];
  }
  return undefined;
}

/**
 * An output chunk as its item says it, its last line's end left out; one of only whitespace (a
 * bare `print()`) said in words: trimmed, its item read `python stdout: ` and nothing else.
 */
function outputText(text) {
  const shown = text.trimEnd();
  if (shown !== '') return shown;
  const lines = text.split('\n').length - 1;
  if (lines === 0) return '(whitespace)';
  return lines === 1 ? '(a blank line)' : `(${lines} blank lines)`;
}

/**
 * At most about `max` UTF-16 units of `text`, with … where it was cut. A pair that stands for one
 * character (an emoji) is kept whole: cut in two, its half was drawn as �.
 */
function clip(text, max) {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return `${text.slice(0, last >= 0xd800 && last <= 0xdbff ? max + 1 : max)}…`;
}

export class EventsList {
  /**
   * @param {HTMLOListElement} list emptied now; its parent is the box that scrolls.
   * @param {(at: number) => number} seconds a page time (performance.now()) as the seconds an item
   *   the server did not time shows (Stop, an error; a client's tool call whose server time has not
   *   come): the timeline's clock (Timeline.secondsAt), the one the server's times are on.
   * @param {(callId: string) => number | undefined} callStartOf the server's time (ms) of a call's
   *   start, once the timeline has heard it (its events socket's `call-start`).
   */
  constructor(list, seconds, callStartOf = () => undefined) {
    this.list = list;
    this.seconds = seconds;
    this.callStartOf = callStartOf;
    /**
     * Events not yet on the page, as `{ at, text, kind, t, untimed, callId }` (`at`: when it came;
     * `t`: the server's time of it; `callId`: a client's call, timed as it goes on the page): made
     * into items by `render`.
     */
    this.pending = [];
    /** The seconds each item on the page shows: where an item timed later goes among them (laterItem). */
    this.secondsOf = new WeakMap();
    /**
     * Client calls on the page at the time they reached it, their call-start not heard yet:
     * callId → item, moved to that time once it comes (timeCalls).
     */
    this.awaitingStart = new Map();
    /** Events dropped from the list's top (or never put in), told by `marker`. */
    this.dropped = 0;
    this.marker = undefined;
    /** Calls recognised (`tool_call.started`) with no result or cancellation yet: callId → the call's name in the list. */
    this.unfinished = new Map();
    /**
     * Each call's name in the list: a tool's second call in the answer is `search #2`, and so on.
     * Results come as each call finishes, not in the calls' order: without the number, three
     * parallel searches' results could not be told apart.
     */
    this.callNames = new Map();
    /** Calls recognised so far, per tool. */
    this.callsPerTool = new Map();
    list.replaceChildren();
  }

  /** A `conveyor` event of the chat stream, as its item if the list shows it. */
  event(e) {
    if (e.type === 'tool_call.started') {
      const n = (this.callsPerTool.get(e.name) ?? 0) + 1;
      this.callsPerTool.set(e.name, n);
      this.callNames.set(e.call_id, n === 1 ? e.name : `${e.name} #${n}`);
    }
    const name = this.callNames.get(e.call_id) ?? e.name;
    if (e.type === 'tool_call.started') this.unfinished.set(e.call_id, name);
    if (e.type === 'tool_call.completed' || e.type === 'tool_call.cancelled') this.unfinished.delete(e.call_id);
    const item = eventItem(e, name);
    // At the server's time of the event (ms since the request started, the timeline's clock), not
    // when it reached the page: timed as it came, a late read put an item after the next one,
    // whose time was the server's (a round's start, which says when the round began though the
    // stream tells it with the round's first tool event). On the server's clock the list is in order.
    if (item) this.add(item[0], item[1], e.t);
  }

  /**
   * A client's tool call (its `tool_calls` delta), call `callId`. The chunk that carries it has no
   * `t` (the gateway keeps the client's calls in OpenAI's shape), but the request's timeline has
   * the call's `call-start`, on the same clock, which the events socket brings: the item shows
   * that, its own time however late the page reads the stream. Until it has come (the socket
   * behind the stream), the time the call reached the page, on the timeline's clock; once it has,
   * its own, the item moved to where that time goes (timeCalls): it kept the time it came, and
   * stayed below server events that happened after it. Before, it showed the latest server time of the stream before
   * it: the round's start, for a call the model made after a long sentence, seconds earlier than the call.
   */
  clientCall(text, callId) {
    this.add(text, 'client', undefined, callId);
  }

  /**
   * Each call still unfinished marked dropped (`why`): the request ended under it (Stop, an error),
   * and the stream that would have told its end is gone, so its "call recognised" stood alone, as
   * if the call were still running.
   */
  dropUnfinished(why, kind) {
    for (const name of this.unfinished.values()) this.add(`${name} call dropped: ${why}`, kind);
    this.unfinished.clear();
  }

  /**
   * `t`: when it happened on the server (ms since the request started), as the stream said it;
   * without one, the item is timed as it came (the page's own acts: Stop, an error, the calls they
   * dropped, all after what the page has read), or for a client's call `callId` at its call-start
   * (clientCall). Either shows no earlier than the item before it, as it came after it.
   */
  add(text, kind = '', t = undefined, callId = undefined) {
    this.pending.push({ at: performance.now(), text, kind, t, callId });
    // A background tab gets no frames: what it could never show is not held for them.
    if (this.pending.length > 2 * MAX_SHOWN) this.dropped += this.pending.splice(0, this.pending.length - MAX_SHOWN).length;
  }

  /** The events since the last frame, in one go; the list follows them if the reader is at its bottom. */
  render() {
    this.timeCalls();
    if (this.pending.length === 0) return;
    // Only the list's own box follows: scrollIntoView scrolled the page too, taking the prompt
    // box out of view at every event. Measured once a frame, not once an event: each measure
    // forced a layout, and a script printing line by line (~1,800 output events) froze the page for 2 s.
    const box = this.list.parentElement;
    const following = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
    const fresh = this.pending.length > MAX_SHOWN ? this.pending.slice(-MAX_SHOWN) : this.pending;
    this.dropped += this.pending.length - fresh.length;
    this.pending = [];
    const items = document.createDocumentFragment();
    // An item the stream did not time is timed now, not as it came: the timeline's clock is set
    // by the server's events, and the chat stream's first ones may come before the events socket's,
    // which also brings a client call's call-start.
    for (const { at, text, kind, t: streamT, callId } of fresh) {
      const item = el('li', kind);
      item.append(el('time'), el('span', undefined, text));
      const t = streamT ?? (callId === undefined ? undefined : this.callStartOf(callId));
      if (t !== undefined) {
        this.place(item, t / 1000, items);
        continue;
      }
      // Without a server time: no earlier than the item above it, as it came after it. Its
      // time would say it happened before what the page had already read.
      const above = items.lastChild ?? this.list.lastChild;
      this.show(item, Math.max(this.secondsOf.get(above) ?? -Infinity, this.seconds(at)));
      items.append(item);
      if (callId !== undefined) this.awaitingStart.set(callId, item);
    }
    this.list.append(items);
    this.trim();
    if (following) box.scrollTop = box.scrollHeight;
  }

  /**
   * Each client call listed before its call-start came, now that it has: at its server time, and
   * moved above the items under it that show later (the stream's events that came between).
   */
  timeCalls() {
    for (const [callId, item] of this.awaitingStart) {
      const t = this.callStartOf(callId);
      // The list's top may have dropped it meanwhile.
      const listed = item.parentNode === this.list;
      if (t === undefined && listed) continue;
      this.awaitingStart.delete(callId);
      if (!listed) continue;
      item.remove();
      const end = document.createDocumentFragment();
      this.place(item, t / 1000, end);
      this.list.append(end);
    }
  }

  /**
   * Puts `item`, which happened at `seconds` on the server's clock, at the end (`fresh`: this
   * frame's items, not yet on the page) or above the items there that show later. The stream's
   * times never go back, but not every item is in the stream's order: a round's start is sent with
   * its first gateway tool event, after a client call the round wrote before it; a client call
   * under validate_tool_arguments is sent once whole, after the events other calls had while it
   * was written (a script's output); an item timed as it came (an untimed one) may show later.
   */
  place(item, seconds, fresh) {
    this.show(item, seconds);
    const later = this.laterItem(seconds, fresh);
    if (later) later.before(item);
    else fresh.append(item);
  }

  /** The first of the items at the list's end (the page's, then `fresh`) that show later than `seconds`; undefined if none do. */
  laterItem(seconds, fresh) {
    let later;
    for (const parent of [fresh, this.list]) {
      // Stops at the first that does not (in a list in order, all above it do not), or at the marker, which shows no time.
      for (let node = parent.lastChild; node; node = node.previousSibling) {
        if (!(this.secondsOf.get(node) > seconds)) return later;
        later = node;
      }
    }
    return later;
  }

  /** `item` says `seconds`. */
  show(item, seconds) {
    this.secondsOf.set(item, seconds);
    item.firstChild.textContent = `${seconds.toFixed(3)} s`;
  }

  /** Down to the latest MAX_SHOWN items, under one line that says how many came before. */
  trim() {
    const first = this.marker ? 1 : 0;
    const over = this.list.childElementCount - first - MAX_SHOWN;
    if (over > 0) {
      // One removal for the lot, however many items the frame brought.
      const range = document.createRange();
      range.setStartBefore(this.list.children[first]);
      range.setEndAfter(this.list.children[first + over - 1]);
      range.deleteContents();
      this.dropped += over;
    }
    if (this.dropped === 0) return;
    this.marker ??= this.list.insertBefore(el('li', 'elided'), this.list.firstChild);
    this.marker.textContent = `… ${this.dropped} earlier event${this.dropped === 1 ? '' : 's'} not shown`;
  }
}
