import { NO_USAGE, sumUsage } from '../llm-client/usage-counts.ts';
import type { SessionEvent, SessionResult, Usage } from './session.ts';
import { stopReasonOf } from './chat-completion-body.ts';
import type { SseWriter } from './sse-writer.ts';
import type { OpenAIErrorBody } from './error-response.ts';

/**
 * The request's timeline (timeline.ts) as the writer reads it: every extension event carries a `t`
 * on its clock, so a client lines the stream's events up with GET /v1/requests/:id/timeline
 * exactly instead of estimating from when they arrived.
 */
export interface EventClock {
  /** Milliseconds since the request started (monotonic, to the microsecond): the timeline's `t` of an event marked now. */
  now(): number;
  /** The timeline's event of `type` in `round`: a round's `round-start`. */
  first(type: 'round-start', round: number): { t: number } | undefined;
}

export interface ChatChunkWriterOptions {
  /** Every chunk's `created` (Unix seconds): the request's arrival. Default: now. */
  created?: number;
  /** stream_options.include_usage: a last chunk with the usage of all rounds. */
  includeUsage: boolean;
  /**
   * stream_options.continuous_usage_stats (vLLM's, with include_usage): every chunk also carries
   * the usage so far, once the upstream has reported some.
   */
  continuousUsage?: boolean;
  /**
   * The request's `conveyor_events` (true unless it sent false): the extension chunks. Off, the
   * `response.messages` turns still come, on the finish chunk (finish()).
   */
  conveyorEvents: boolean;
  /** The clock of the extension events' `t`: the request's Timeline. */
  clock: EventClock;
}

/**
 * Turns Session events into OpenAI `chat.completion.chunk`s on an SSE stream.
 *
 * Tool execution travels as extension chunks: a standard chunk with `choices: []` (the shape of
 * the usage chunk, which every OpenAI client already handles) plus a top-level `conveyor` object.
 * Clients that do not know it see an empty chunk and move on.
 */
export class ChatChunkWriter {
  private readonly sse: SseWriter;
  private readonly options: ChatChunkWriterOptions;
  /**
   * `{"id":…,"object":…,"created":…,"model":…,` — the envelope every chunk starts with, serialised
   * once. A chunk is this plus the rest of its object's JSON: the same bytes JSON.stringify gives
   * for the whole object (keys in the same order), without rebuilding the envelope per token.
   */
  private readonly head: string;
  /** With continuousUsage: the usage of the rounds before this one, and this round's so far. */
  private usageBefore: Usage = NO_USAGE;
  private roundUsage: Usage | undefined;
  /**
   * What closes every chunk but the usage chunk: `,"usage":{…}` (continuousUsage, once the upstream
   * has reported some), `,"usage":null` with include_usage (OpenAI: "All other chunks will also
   * include a usage field, but with a null value"), else empty. One string, so a token's chunk
   * costs no more for it.
   */
  private usageField: string;
  /**
   * Whether a gateway tool has had an event yet. Until one has, the round events are held back (a
   * round that ends without one drops its own): a response in which no gateway tool runs streams
   * exactly as OpenAI's, every chunk with its choice, for the loops that read `choices[0]` of
   * every chunk (OpenAI's own Python examples do).
   */
  private toolEvents = false;
  /** A round.started held back until its round's first tool event. */
  private heldRoundStart: number | undefined;
  /**
   * Refusals of calls to tools the request does not have, made while no gateway tool had run: no
   * tool ran for them either, so they stay out of the stream (their result too), which goes on as
   * OpenAI's would. The timeline and `response.messages` still have them.
   */
  private readonly quietRefusals = new Set<string>();

  constructor(sse: SseWriter, id: string, model: string, options: ChatChunkWriterOptions) {
    this.sse = sse;
    this.options = options;
    this.usageField = options.includeUsage ? ',"usage":null' : '';
    const created = options.created ?? Math.floor(Date.now() / 1000);
    this.head = `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},`;
  }

  start(): void {
    this.choice({ role: 'assistant', content: '' }, null);
  }

  event(e: SessionEvent): void {
    switch (e.type) {
      // One token each: written from a template, the text being the only part serialised.
      case 'content':
        this.sse.data(`${this.head}"choices":[{"index":0,"delta":{"content":${JSON.stringify(e.text)}},"logprobs":null,"finish_reason":null}]${this.usageField}}`);
        return;
      case 'reasoning':
        this.sse.data(`${this.head}"choices":[{"index":0,"delta":{"reasoning_content":${JSON.stringify(e.text)}},"logprobs":null,"finish_reason":null}]${this.usageField}}`);
        return;
      case 'usage':
        if (!this.options.continuousUsage) return;
        this.roundUsage = e.usage;
        this.usageField = `,"usage":${JSON.stringify(sumUsage(this.usageBefore, e.usage))}`;
        return;
      case 'round-start':
        if (this.toolEvents) this.roundStarted(e.round);
        else this.heldRoundStart = e.round;
        return;
      case 'round-end':
        if (this.roundUsage) {
          this.usageBefore = sumUsage(this.usageBefore, this.roundUsage);
          this.roundUsage = undefined;
        }
        this.sse.batch();
        this.heldRoundStart = undefined;
        if (this.toolEvents) this.extension({ type: 'round.finished', round: e.round, finish_reason: e.finishReason });
        return;
    }
    this.callEvent(e);
  }

  /**
   * An event of a call: a gateway tool's, as extension chunks (the first of them releases the
   * round start held back), or the client's, as `tool_calls` deltas.
   */
  private callEvent(e: SessionEvent): void {
    if (e.type === 'tool-call' && e.undeclared && !this.toolEvents) {
      this.quietRefusals.add(e.callId);
      return;
    }
    if (e.type === 'tool-result' && this.quietRefusals.delete(e.callId)) return;
    if (!this.toolEvents && (e.type === 'tool-call' || e.type === 'tool-progress' || e.type === 'tool-cancelled' || e.type === 'tool-result')) {
      this.toolEvents = true;
      if (this.heldRoundStart !== undefined) this.roundStarted(this.heldRoundStart);
      this.heldRoundStart = undefined;
    }
    switch (e.type) {
      case 'tool-call':
        this.extension({ type: 'tool_call.started', round: e.round, call_id: e.callId, name: e.name });
        return;
      case 'tool-progress':
        if (e.progress.type === 'unit-done') {
          this.extension({ type: 'tool_call.progress', call_id: e.callId, name: e.name, detail: e.progress.detail });
        } else {
          this.extension({ type: 'tool_call.output', call_id: e.callId, name: e.name, stream: e.progress.stream, text: e.progress.text });
        }
        return;
      case 'tool-cancelled':
        this.extension({ type: 'tool_call.cancelled', round: e.round, call_id: e.callId, name: e.name, reason: e.reason });
        return;
      case 'client-call-start':
        this.choice({ tool_calls: [{ index: e.index, id: e.callId, type: 'function', function: { name: e.name, arguments: '' } }] }, null);
        return;
      // One token each, as content is: the template keeps the generic path's JSON.stringify of the
      // whole chunk (about 10x the cost) off every argument token (bench/overhead parser-cpu).
      case 'client-call-args':
        this.sse.data(`${this.head}"choices":[{"index":0,"delta":{"tool_calls":[{"index":${e.index},"function":{"arguments":${JSON.stringify(e.text)}}}]},"logprobs":null,"finish_reason":null}]${this.usageField}}`);
        return;
      case 'tool-result':
        // Results that settle together, and the round's end after the last of them (then the next
        // round's start or the finish), leave in one packet.
        this.sse.batch();
        const completed = { type: 'tool_call.completed', round: e.round, call_id: e.callId, name: e.name, ok: e.ok, content: e.content };
        try {
          this.extension(e.data ? { ...completed, data: e.data } : completed);
        } catch {
          // A data the kit would have refused (a BigInt, a cycle), from a tool made without it: the
          // event goes without it rather than the stream failing for it.
          this.extension(completed);
        }
        return;
    }
  }

  /** Runs `run`; the chunks its events produce leave in one write (SseWriter.group). */
  group(run: () => void): void {
    this.sse.group(run);
  }

  finish(result: SessionResult): void {
    this.sse.batch();
    // Without it a streaming client could not put the gateway's tool rounds (their calls'
    // arguments above all) into its history: the turns to append, the answer's own included.
    // With the stop reason (a non-streamed body's conveyor.stop_reason): "length" is the model's token
    // limit or the gateway's max_tool_rounds, which only a response whose tools ran can reach.
    const messages = result.messages.length > 0 ? { type: 'response.messages', stop_reason: result.stopReason, messages: [...result.messages, ...answerTurn(result)] } : undefined;
    // A client that turned the events off still needs the turns, and a response in which no
    // gateway tool ran (the model called the client's tools) has sent no extension chunk so far:
    // then they ride on the finish chunk, which has its choice, so a client that reads choices[0]
    // of every chunk meets no empty extension chunk, and the SDKs keep the unknown field as they keep any.
    const onFinish = !this.options.conveyorEvents || !this.toolEvents;
    if (messages !== undefined && !onFinish) this.extension(messages);
    const carried = messages !== undefined && onFinish ? { conveyor: this.stamped(messages) } : {};
    this.chunk({ choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: result.finishReason, ...stopReasonOf(result) }], ...carried });
    if (this.options.includeUsage) this.sse.data(this.head + JSON.stringify({ choices: [], usage: result.usage }).slice(1));
    this.sse.data('[DONE]');
    this.sse.end();
  }

  /** A failure after the stream began: OpenAI clients raise on a chunk carrying `error`. */
  fail(body: OpenAIErrorBody): void {
    this.sse.batch();
    this.sse.data(body);
    this.sse.data('[DONE]');
    this.sse.end();
  }

  private choice(delta: Record<string, unknown>, finishReason: string | null): void {
    this.chunk({ choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] });
  }

  /**
   * Its `t` is the round's start as the timeline marked it, not this moment: the event may have
   * been held back until the round's first tool event, and the round's decode bar starts there.
   * Still no earlier than any event before it: the round began after they were written.
   */
  private roundStarted(round: number): void {
    this.extension({ type: 'round.started', round }, this.options.clock.first('round-start', round)?.t);
  }

  private extension(event: ConveyorEvent, t?: number): void {
    if (!this.options.conveyorEvents) return;
    this.chunk({ choices: [], conveyor: this.stamped(event, t) });
  }

  /** `event` with its `t` (default: now), second after `type`, for a reader who skims the raw stream. */
  private stamped({ type, ...fields }: ConveyorEvent, t = this.options.clock.now()): ConveyorEvent {
    return { type, t, ...fields };
  }

  /** The envelope, then `fields` (their JSON without its braces), then the usage so far if asked for. */
  private chunk(fields: Record<string, unknown>): void {
    this.sse.data(`${this.head}${JSON.stringify(fields).slice(1, -1)}${this.usageField}}`);
  }
}

type ConveyorEvent = { type: string } & Record<string, unknown>;

/** The last round's answer as an assistant turn of its own, when the response has one. */
function answerTurn(result: SessionResult): Array<{ role: 'assistant'; content: string }> {
  return result.answer === undefined ? [] : [{ role: 'assistant', content: result.answer }];
}
