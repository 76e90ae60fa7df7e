import type { ToolCallDeltaPart } from '../llm-client/upstream-parts.ts';
import { createOpenAIToolCallsParser, type OpenAIToolCallsParser } from '../parsers/index.ts';
import type { ParserEvent, ToolCallParser } from '../parsers/parser-events.ts';
import type { ToolPlugin } from '../plugins/plugin-types.ts';
import type { ClientCalls } from './client-calls.ts';
import type { ClientToolValidator } from './client-tool-validator.ts';
import type { Dispatcher } from './dispatcher.ts';
import { lineFieldsOf } from './parser-selection.ts';
import type { SessionEvent } from './session.ts';
import type { Timeline } from './timeline.ts';
import type { UndeclaredToolCheck } from './undeclared-tools.ts';

export interface RoundParserOptions {
  round: number;
  /** The round's call-id prefix (SessionOptions.callIdPrefix): calls the upstream parsed are numbered `<prefix>tc1`, … */
  callIdPrefix: string;
  parser: ToolCallParser;
  tools: ReadonlyMap<string, ToolPlugin>;
  dispatcher: Dispatcher;
  clientCalls: ClientCalls;
  timeline: Timeline;
  onEvent: (event: SessionEvent) => void;
  emitText: (text: string) => void;
  /** Early checks for client-executed calls, when the request asked for them. */
  validator?: ClientToolValidator;
  /** Refuses a call to a name the request offers no tool under (undefined: any such call is the client's). */
  undeclared?: UndeclaredToolCheck;
  onClientReject: (call: { callId: string; name: string; undeclared?: boolean }, reason: string) => void;
  /**
   * The most calls the round may start (1 for `parallel_tool_calls: false`, else the gateway's
   * maxToolCallsPerRound): `exceeded` is called where the next one begins. That call and
   * everything after it is dropped; the caller cuts the decode.
   */
  callLimit?: { max: number; exceeded: (call: { callId: string; name: string }) => void };
}

/**
 * One round's parsing: the model's text through its format parser, and — for upstreams that
 * parse tool calls server-side — `delta.tool_calls` through the OpenAI adapter. Both yield the
 * same events, routed here: calls to registered plugins go to the Dispatcher, any other call is
 * the client's to execute.
 */
export class RoundParser {
  private readonly o: RoundParserOptions;
  /** The round's visible text: what goes into the assistant message. */
  visibleText = '';
  /** The reasoning the parser took out of the text (a `<think>` block, harmony's analysis channel). */
  reasoningText = '';
  private toolCallParser: OpenAIToolCallsParser | undefined;
  /** Calls begun this round, less those the parser then found malformed (they never happened). */
  private readonly callsStarted = new Set<string>();
  /**
   * The calls the client was told of with `tool-call` (the gateway's, and a client's call that
   * validation refused), id → name: each gets exactly one terminal event, a tool-result at the
   * round's end, or a tool-cancelled here for a gateway call that turns out malformed.
   */
  private readonly announcedCalls = new Map<string, string>();
  /** The round was cut (at a second call, or by a reject): nothing more is read. */
  private stopped = false;

  constructor(o: RoundParserOptions) {
    this.o = o;
  }

  /** The round's calls, gateway's and client's together, in the order the model began them. */
  callOrder(): string[] {
    return [...this.callsStarted];
  }

  text(delta: string): void {
    if (this.stopped) return;
    const parser = this.o.parser;
    if (parser.pushFast === undefined) return this.route(parser.push(delta));
    const events = parser.pushFast(delta);
    // The id of the call whose next argument fragment is `delta`, as route handles a call-args event.
    if (typeof events === 'string') this.o.clientCalls.args(events, delta);
    else this.route(events);
  }

  /** The upstream streamed reasoning in a field of its own (ToolCallParser.upstreamSplitsReasoning). */
  upstreamReasoning(): void {
    this.o.parser.upstreamSplitsReasoning?.();
  }

  toolCallDelta(part: ToolCallDeltaPart): void {
    if (this.stopped) return;
    this.toolCallParser ??= createOpenAIToolCallsParser({ callIdPrefix: `${this.o.callIdPrefix}tc`, lineFields: lineFieldsOf(this.o.tools) });
    this.route(this.toolCallParser.pushToolCallDelta(part));
  }

  /**
   * A reject cut the round short: what the same socket read still carries after it is not read,
   * so no call begins, grows or ends after the cut.
   */
  stop(): void {
    this.stopped = true;
  }

  /** The round's decode is over; `cut`: the token limit ended it, so an open upstream-parsed call is unfinished. */
  end(cut = false): void {
    // A call cut off by the stop is unfinished on purpose: flushing would release its raw text as content.
    if (this.stopped) return;
    this.route(this.o.parser.end(cut));
    if (this.toolCallParser) this.route(cut ? this.toolCallParser.endCut() : this.toolCallParser.end());
  }

  private route(events: ParserEvent[]): void {
    const { round, dispatcher, clientCalls, timeline, onEvent } = this.o;
    for (const event of events) {
      if (this.stopped) return;
      switch (event.type) {
        case 'text':
          this.visibleText += event.text;
          this.o.emitText(event.text);
          break;
        case 'reasoning':
          this.reasoningText += event.text;
          onEvent({ type: 'reasoning', text: event.text });
          break;
        case 'call-start':
          if (this.o.callLimit && this.callsStarted.size >= this.o.callLimit.max) {
            this.stopped = true;
            this.o.callLimit.exceeded({ callId: event.callId, name: event.name });
            return;
          }
          this.callsStarted.add(event.callId);
          timeline.mark('call-start', { round, callId: event.callId, detail: event.name });
          if (this.o.tools.has(event.name)) {
            dispatcher.callStart(event.callId, event.name);
            this.announcedCalls.set(event.callId, event.name);
            onEvent({ type: 'tool-call', round, callId: event.callId, name: event.name });
            break;
          }
          const undeclared = this.o.undeclared?.(event.name);
          if (undeclared === undefined) {
            clientCalls.start(event.callId, event.name);
            break;
          }
          clientCalls.startUndeclared(event.callId, event.name, undeclared);
          this.#announceRefusal(event.callId, event.name, true);
          this.o.onClientReject({ callId: event.callId, name: event.name, undeclared: true }, undeclared);
          break;
        case 'call-args':
          clientCalls.args(event.callId, event.text);
          break;
        case 'call-piece': {
          const clientTool = clientCalls.name(event.callId);
          if (clientTool === undefined) {
            dispatcher.piece(event.callId, event.piece);
            break;
          }
          if (event.piece.kind === 'field') this.o.clientCalls.field(event.callId, event.piece.path, event.piece.value);
          const reason = this.o.validator?.check(clientTool, event.piece);
          if (reason) this.#rejectClientCall(event.callId, clientTool, reason);
          break;
        }
        case 'call-end': {
          const clientTool = clientCalls.name(event.callId);
          if (clientTool === undefined) {
            dispatcher.callEnd(event.callId, event.args);
            break;
          }
          const reason = clientCalls.isRejected(event.callId) ? undefined : this.o.validator?.checkEnd(clientTool, event.args);
          if (reason) this.#rejectClientCall(event.callId, clientTool, reason);
          else clientCalls.end(event.callId, event.args);
          break;
        }
        case 'malformed':
          timeline.mark('error', { round, callId: event.callId, detail: `malformed call: ${event.reason}` });
          if (event.callId) {
            this.callsStarted.delete(event.callId);
            clientCalls.malformed(event.callId);
            dispatcher.cancel(event.callId, event.reason);
            // Cancelled calls leave no outcome, so no tool-result: the started event gets its end here.
            const name = this.announcedCalls.get(event.callId);
            if (name !== undefined && !clientCalls.has(event.callId)) {
              this.announcedCalls.delete(event.callId);
              onEvent({ type: 'tool-cancelled', round, callId: event.callId, name, reason: event.reason });
            }
          }
          break;
      }
    }
  }

  /**
   * Early validation refused a client call: it is the gateway's to answer (its observation is the
   * reason, as for a rejected gateway call), and it ends with a tool-result, announced here so that
   * result has its start. Never streamed to the client as tool_calls (held until valid).
   */
  #rejectClientCall(callId: string, name: string, reason: string): void {
    this.o.clientCalls.reject(callId, reason);
    this.#announceRefusal(callId, name);
    this.o.onClientReject({ callId, name }, reason);
  }

  /** A call the gateway answers itself with a refusal: started, so that its tool-result has its start. */
  #announceRefusal(callId: string, name: string, undeclared = false): void {
    if (this.announcedCalls.has(callId)) return;
    this.announcedCalls.set(callId, name);
    this.o.onEvent({ type: 'tool-call', round: this.o.round, callId, name, ...(undeclared ? { undeclared: true as const } : {}) });
  }
}
