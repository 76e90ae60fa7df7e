// One request's timeline on the playground page (GET /): decode and tool spans from the server's
// own events, drawn as bars. Plain browser JavaScript, no build step.

import { setText } from './dom.js';
import { followRequestEvents } from './follow-request-events.js';
import { TimelineRow } from './timeline-row.js';

/** request-end's details for a request that ended with its answer (the session's stop reasons); any other is an error's code. */
const ANSWERED = new Set(['answer', 'length', 'max_tool_rounds', 'client_tool_calls']);

/** How a request ended, in the stats' words: undefined when it answered. */
function outcomeOf(detail) {
  if (detail === undefined || ANSWERED.has(detail)) return undefined;
  return detail === 'client_aborted' ? 'stopped' : `failed: ${detail}`;
}

/**
 * One request's timeline, drawn from the server's own record of it: the events WebSocket
 * (GET /v1/requests/:id/events) replays what the request has had, then sends each event as it
 * happens, with the server's monotonic times. A decode bar runs from the round's start to the end
 * of the upstream decode; a tool bar from the tool's start to its result, pale until its first input
 * (a piece, or the whole call): with partial execution a tool opens as its call begins and then
 * waits for the model, and that wait is not tool time.
 */
export class Timeline {
  /**
   * @param {{ panel: HTMLElement, stats: HTMLElement, headers: () => Record<string, string>, onTrouble: (text: string) => void }} page
   *   where it draws, the request headers (the API key) for polling, and where it says it cannot follow.
   */
  constructor(page) {
    this.page = page;
    this.rounds = new Map(); // round → span
    this.calls = new Map(); // callId → span
    this.names = new Map(); // callId → the tool it calls (its call-start), for a call that never opened a tool
    this.callStarts = new Map(); // callId → its call-start's t (ms): a client's call has no other server time on the page
    this.unopened = new Map(); // callId → its call-start (t, round), until a tool or an abort gives it a bar
    this.inputs = new Map(); // callId → when its first piece (or the whole call) was decoded
    this.spans = [];
    /** The spans' rows on the page (TimelineRow), in the same order. */
    this.rows = [];
    this.firstToken = undefined;
    this.end = undefined;
    /** The stream's usage chunk (all rounds), once it has come. */
    this.usage = undefined;
    /** When the page sent the request (performance.now()): the clock's zero until the server's first event. */
    this.sentAt = performance.now();
    /**
     * The page's time of the server's zero (its request-start): no later than the answer's
     * headers (follow), and each event arrives at least its `t` after it, so the earliest of
     * arrival − t is the closest. The send was no zero to count from: the way to the gateway (a
     * proxy, a far host) came before its t = 0.
     */
    this.origin = undefined;
    this.closed = false;
    /** Why the timeline could not follow the request, if it could not: the run's final status keeps it. */
    this.trouble = undefined;
    /** How the request ended, when not with an answer: 'stopped', or 'failed: <error code>' (request-end's detail). */
    this.outcome = undefined;
    /** When it lost the request (server seconds): its clock stops there, since nothing it draws after is the server's. */
    this.lostAt = undefined;
  }

  fail(why) {
    this.trouble = `the timeline could not follow this request (${why})`;
    this.lostAt ??= this.now();
    if (!this.closed) this.page.onTrouble(this.trouble);
  }

  /** Follows request `id`; the key, if any, as the subprotocol a browser WebSocket can carry. */
  follow(id, key) {
    // Called as the answer's headers come, which the server wrote after its zero: the estimate
    // starts here, and the events only bring it earlier. Left at the send until the first event,
    // a list item put on the page before it counted from there, and the items after it from the
    // server's zero, seconds less on a slow way to the gateway.
    this.origin = Math.min(this.origin ?? Infinity, performance.now());
    this.feed = followRequestEvents({
      id,
      key,
      headers: () => this.page.headers(),
      onEvent: (e) => this.serverEvent(e),
      onLost: (why) => this.fail(why),
      following: () => this.end === undefined && !this.closed && this.trouble === undefined,
    });
  }

  close() {
    this.closed = true;
    this.feed?.close();
  }

  /** Seconds on the server's clock: the last event's, advanced by the local clock while the request runs and is followed. */
  now() {
    return this.end ?? this.lostAt ?? this.secondsAt(performance.now());
  }

  /**
   * Page time `at` (performance.now()) in seconds on the server's clock, as the timeline counts
   * them: the events list says its times in these, so an event and its bar have the same time.
   */
  secondsAt(at) {
    return (at - (this.origin ?? this.sentAt)) / 1000;
  }

  span(label, kind, start, round) {
    /** `verdict`: how a failed call failed (rejected, malformed), said before its label. */
    const span = { label, kind, start, end: undefined, round, verdict: undefined };
    this.spans.push(span);
    return span;
  }

  /**
   * What the server did at `t` (ms) has just come, so its zero was at least `t` ago: keeps the live
   * bars in step with the server's clock. The chat stream's events (their `t`) tell it too: from a
   * late events socket alone, live bars ended a second before events the list already showed.
   */
  heard(t) {
    this.origin = Math.min(this.origin ?? Infinity, performance.now() - t);
  }

  serverEvent(e) {
    const t = e.t / 1000;
    this.heard(e.t);
    switch (e.type) {
      case 'round-start':
        this.rounds.set(e.round, this.span(`round ${e.round} · decode`, 'decode', t, e.round));
        break;
      case 'first-token':
        this.firstToken ??= t;
        break;
      case 'decode-end': {
        const decode = this.rounds.get(e.round);
        if (decode) decode.end = t;
        break;
      }
      case 'call-start':
        this.names.set(e.callId, e.detail);
        this.callStarts.set(e.callId, e.t);
        this.unopened.set(e.callId, { t, round: e.round });
        break;
      case 'tool-start':
        this.unopened.delete(e.callId);
        this.calls.set(e.callId, Object.assign(this.span(`${e.detail} · ${e.callId}`, 'tool', t, e.round), { callId: e.callId }));
        break;
      case 'piece':
      case 'call-end':
        if (e.callId && !this.inputs.has(e.callId)) this.inputs.set(e.callId, t);
        break;
      case 'tool-end': {
        const call = this.calls.get(e.callId);
        if (call) {
          call.end = t;
          // `aborted`: the request stopped it (Stop, the client gone, the upstream or round failed),
          // not its tool. A call an abort event already judged (rejected, malformed) keeps that word.
          if (call.verdict === undefined && e.detail !== 'ok') call.kind = e.detail === 'aborted' ? 'aborted' : 'failed';
        }
        break;
      }
      case 'abort': {
        // A call given up while it was being decoded: rejected (by its tool, by validation, or for
        // a name no tool has) or malformed (the parser's verdict, or the token limit cut it). Most
        // such calls never opened a tool, so their bar starts here, named by their call-start.
        if (!e.callId) break;
        this.unopened.delete(e.callId);
        const call = this.calls.get(e.callId) ?? this.span(`${this.names.get(e.callId) ?? 'call'} · ${e.callId}`, 'failed', t, e.round);
        call.kind = 'failed';
        call.verdict = /^(rejected|malformed):/.exec(e.detail ?? '')?.[1] ?? 'failed';
        call.end ??= t;
        break;
      }
      case 'request-end':
        this.end = t;
        this.outcome = outcomeOf(e.detail);
        // A decode the request's end cut (Stop, the upstream failing) has no decode-end: its bar
        // ran on to the end in decode blue, and the timeline read as a request that went well.
        if (this.outcome !== undefined) {
          for (const decode of this.rounds.values()) {
            if (decode.end !== undefined) continue;
            decode.end = t;
            decode.kind = this.outcome === 'stopped' ? 'aborted' : 'failed';
          }
          // Sequentially a tool opens only once its round's decode ends, so a call the end cut
          // while it was written (or before its round's decode ended) never had a bar, as if the
          // model had not begun it. It gets one, dropped, as the events list says of it.
          for (const [callId, { t: start, round }] of this.unopened) {
            const call = this.span(`${this.names.get(callId) ?? 'call'} · ${callId}`, this.outcome === 'stopped' ? 'aborted' : 'failed', start, round);
            call.verdict = 'dropped';
            call.end = t;
          }
          this.unopened.clear();
        }
        this.close();
        break;
    }
  }

  /** When call `span` had something to work on: its start, or later its first input (sequentially, every input came before the start). */
  busyFrom(span) {
    const input = this.inputs.get(span.callId);
    return input === undefined ? span.start : Math.max(span.start, Math.min(input, span.end ?? input));
  }

  /** Tool seconds at work (from the first input on), and how many of them while the call's own round still decoded. */
  overlap() {
    let hidden = 0;
    let total = 0;
    for (const call of this.calls.values()) {
      const end = call.end ?? this.now();
      const from = this.busyFrom(call);
      total += Math.max(0, end - from);
      const decode = this.rounds.get(call.round);
      if (decode) hidden += Math.max(0, Math.min(end, decode.end ?? this.now()) - from);
    }
    return { hidden, total };
  }

  /**
   * Puts the spans on the page: each row made once, then patched in place (its bar, its times, its
   * label), new rows appended. The panel was rebuilt every frame while a request ran, and a screen
   * reader reading the timeline lost its place with every frame.
   */
  draw() {
    const total = Math.max(this.now(), 0.001);
    const fresh = [];
    this.spans.forEach((span, i) => {
      let row = this.rows[i];
      if (!row) fresh.push((row = this.rows[i] = new TimelineRow()));
      const end = span.end ?? total;
      row.set('class', `bar ${span.kind}`, (v) => (row.bar.className = v));
      row.set('left', `${(100 * span.start) / total}%`, (v) => (row.bar.style.left = v));
      row.set('width', `${Math.max(0.4, (100 * (end - span.start)) / total)}%`, (v) => (row.bar.style.width = v));
      row.set('title', `${span.start.toFixed(3)}–${end.toFixed(3)} s`, (v) => (row.bar.title = v));
      // The wait for the first input, pale: the tool was open, not working.
      const idle = span.callId !== undefined && span.kind === 'tool' ? (100 * (this.busyFrom(span) - span.start)) / Math.max(end - span.start, 0.001) : 0;
      row.set('background', idle > 0 ? `linear-gradient(to right, var(--tool-idle) ${idle}%, var(--tool) ${idle}%)` : '', (v) => (row.bar.style.background = v));
      row.set('times', `from ${span.start.toFixed(3)} s to ${end.toFixed(3)} s`, (v) => setText(row.times, v));
      // Failed is said in words too, not by the bar's colour alone, and which way: first, since
      // the column cuts a long label's end (the call id). The whole label on hover.
      row.set('label', span.kind === 'failed' || span.kind === 'aborted' ? `${span.verdict ?? span.kind} · ${span.label}` : span.label, (v) => {
        setText(row.label, v);
        row.label.title = v;
      });
    });
    // The panel is this timeline's once its first row is there; until then it may hold an earlier
    // request's rows (or none), which go.
    const panel = this.page.panel;
    if (this.rows.length === 0 ? panel.firstChild !== null : panel.firstChild !== this.rows[0].node) panel.replaceChildren(...this.rows.map((row) => row.node));
    else if (fresh.length > 0) panel.append(...fresh.map((row) => row.node));
    const { hidden, total: toolTotal } = this.overlap();
    setText(this.page.stats, [
      this.firstToken !== undefined ? `first token ${(this.firstToken * 1000).toFixed(0)} ms` : undefined,
      `${this.end !== undefined ? 'total' : this.lostAt !== undefined ? 'lost at' : 'elapsed'} ${total.toFixed(2)} s${this.outcome ? ` (${this.outcome})` : ''}`,
      `${this.rounds.size} round${this.rounds.size === 1 ? '' : 's'}`,
      this.usage ? `${this.usage.prompt_tokens} prompt + ${this.usage.completion_tokens} completion tokens` : undefined,
      this.calls.size ? `tool time ${toolTotal.toFixed(2)} s, ${hidden.toFixed(2)} s of it during the decode` : undefined,
    ]
      .filter(Boolean)
      .join(' · '));
  }
}
