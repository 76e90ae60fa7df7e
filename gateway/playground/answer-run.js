// The playground's answer being streamed (GET /): its bubble in the conversation, the tool events
// of its chat stream and its timeline. Plain browser JavaScript, no build step; what the model or a
// tool wrote goes into the page as text, never as HTML.

import { ClientCalls } from './answer-turns.js';
import { el } from './dom.js';
import { errorWords } from './error-message.js';
import { EventsList } from './events-list.js';
import { Timeline } from './timeline.js';

/**
 * One answer being streamed: its bubble and the tool events of its chat stream. `ui`: the page's
 * elements; `headers`: the requests' headers; `onTrouble(run, text)`: the timeline lost the request.
 */
export class AnswerRun {
  constructor({ ui, headers, onTrouble }) {
    this.ui = ui;
    this.abort = new AbortController();
    this.text = '';
    /**
     * A reasoning model's thinking (`delta.reasoning_content`): shown apart, not sent back as history
     * with the answer (the turns of tool rounds keep theirs as the gateway wrote them, which a chat
     * template drops before a later question).
     */
    this.reasoning = '';
    /** The turns the response adds to the conversation (its `response.messages` event, sent when tools ran). */
    this.turns = undefined;
    /** Why the gateway stopped (`response.messages`' stop_reason): `max_tool_rounds` or `length` under one finish_reason "length". */
    this.stopReason = undefined;
    /** The calls for the client's own tools, which the page does not run (answer-turns.js). */
    this.clientCalls = new ClientCalls();
    this.timeline = new Timeline({ panel: ui.timeline, stats: ui.stats, headers, onTrouble: (text) => onTrouble(this, text) });
    this.events = new EventsList(ui.events, (at) => this.timeline.secondsAt(at), (callId) => this.timeline.callStarts.get(callId));
    this.bubble = el('div', 'turn assistant');
    this.content = el('pre', 'content');
    // Above the answer and hidden until the model thinks aloud: a thinking model writes nothing
    // else for as long as it reasons, and an empty bubble looked like a request that hung.
    this.thoughts = el('pre', 'reasoning');
    this.thoughts.hidden = true;
    // The calls of the client's own tools, under the text: an answer that only called one left
    // its bubble empty, the call only in the events list.
    this.calls = el('pre', 'calls');
    this.calls.hidden = true;
    this.bubble.append(el('div', 'who', 'assistant'), this.thoughts, this.content, this.calls);
    ui.conversation.append(this.bubble);
  }

  /**
   * Puts the answer so far in its bubble: once a frame, not once a token, since each time lays the
   * whole answer out again (a long answer's tokens, each laid out, kept the page busy for seconds).
   */
  render() {
    this.events.render();
    if (!this.textChanged) return;
    this.textChanged = false;
    // Follow the answer as it grows, unless the reader has scrolled up.
    const box = this.ui.conversation;
    const following = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
    this.content.textContent = this.text;
    this.thoughts.textContent = this.reasoning;
    this.thoughts.hidden = this.reasoning === '';
    this.calls.textContent = this.callsText();
    this.calls.hidden = this.calls.textContent === '';
    if (following) box.scrollTop = box.scrollHeight;
  }

  /** One line per client tool call so far: its name and arguments, and that the page does not run it. */
  callsText() {
    return this.clientCalls.list.map((call) => `called ${call.function.name}(${call.function.arguments}) · not run: the playground runs no client tools`).join('\n');
  }

  /** The whole answer, told once to a screen reader (the bubble itself is redrawn every frame, so it is no live region). */
  announce(text) {
    this.ui.announcer.textContent = text;
  }

  /** One parsed chunk of the stream: text for the bubble, `conveyor` events for the list. */
  chunk(chunk) {
    // Not always OpenAI's shape (a proxy's own words): its `error.message` alone said "error: " and nothing after.
    if (chunk.error) throw new Error(errorWords(chunk) ?? 'the stream carried an error with no message');
    if (chunk.usage) this.timeline.usage = chunk.usage;
    const delta = chunk.choices?.[0]?.delta;
    this.finishReason = chunk.choices?.[0]?.finish_reason ?? this.finishReason;
    // Part of the answer has come (text, thinking, a call, a tool event), not only the stream's opening.
    if (delta?.content || delta?.reasoning_content || delta?.tool_calls || chunk.conveyor) this.began = true;
    if (delta?.content) {
      this.text += delta.content;
      this.textChanged = true;
    }
    if (delta?.reasoning_content) {
      this.reasoning += delta.reasoning_content;
      this.textChanged = true;
    }
    if (delta?.tool_calls) {
      this.clientCalls.add(delta.tool_calls);
      this.textChanged = true;
    }
    for (const call of delta?.tool_calls ?? []) if (call.function?.name) this.events.clientCall(`client tool call: ${call.function.name} (not run: the playground runs no client tools)`, call.id);
    const e = chunk.conveyor;
    if (!e) return;
    if (typeof e.t === 'number') this.timeline.heard(e.t);
    if (e.type === 'response.messages') {
      this.turns = e.messages;
      this.stopReason = e.stop_reason;
    }
    this.events.event(e);
  }
}
