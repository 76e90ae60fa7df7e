import { ClientAbortedError, ToolRejectedError } from '../core/errors.ts';
import type { ChatCompletionPump, UpstreamStream } from '../llm-client/pump-chat-completion.ts';
import type { ReplicaAffinity } from '../llm-client/upstream-replicas.ts';
import type { UpstreamPart } from '../llm-client/upstream-parts.ts';
import type { ToolCallParser } from '../parsers/parser-events.ts';
import type { ToolPlugin, ToolProgress } from '../plugins/plugin-types.ts';
import type { ChatMessage, ChatRequest } from './chat-request-schema.ts';
import { ClientCalls, type ClientToolCall } from './client-calls.ts';
import type { ClientToolValidator } from './client-tool-validator.ts';
import { Dispatcher, type CallOutcome } from './dispatcher.ts';
import { roundMessages } from './round-messages.ts';
import { RoundParser } from './round-parser.ts';
import { upstreamBody } from './upstream-body.ts';
import type { Timeline } from './timeline.ts';

export interface UpstreamTarget {
  /** Streams to the upstream (or its replicas), its connection options checked once (`createChatCompletionPump`). */
  pump: ChatCompletionPump;
  /** When set, every upstream request names this model whatever the client asked for. */
  model?: string;
  /** Replicas only: false sends every round to the least loaded replica instead of the conversation's own. */
  conversationAffinity?: boolean;
  /** Ask the upstream for usage on every chunk (config `upstream.continuousUsage`). */
  continuousUsage?: boolean;
}

export type SessionEvent =
  | { type: 'round-start'; round: number }
  /** The upstream has taken the round's request (200, event stream): tokens follow. */
  | { type: 'upstream-accepted'; round: number }
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool-call'; round: number; callId: string; name: string }
  | { type: 'tool-progress'; callId: string; name: string; progress: ToolProgress }
  | { type: 'tool-result'; round: number; callId: string; name: string; ok: boolean; content: string }
  /** A call the client executes itself: streamed as standard OpenAI `tool_calls` deltas. */
  | { type: 'client-call-start'; index: number; callId: string; name: string }
  | { type: 'client-call-args'; index: number; text: string }
  | { type: 'round-end'; round: number; finishReason: string };

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type StopReason = 'answer' | 'length' | 'max_tool_rounds' | 'client_tool_calls';

export interface SessionResult {
  /** Everything the client was sent as content, all rounds, in order. */
  content: string;
  /** Reasoning text (upstream `reasoning_content` or a parsed `<think>` block), all rounds. */
  reasoning: string;
  finishReason: 'stop' | 'length' | 'tool_calls';
  stopReason: StopReason;
  usage: Usage;
  /** The messages this request appended to the conversation: assistant turns and tool observations. */
  messages: ChatMessage[];
  /** The last round's text when that round answered (called nothing): the conversation's next assistant turn. */
  answer?: string;
  /** Calls the client must execute (tools the gateway has no plugin for), as OpenAI `tool_calls`. */
  clientToolCalls: ClientToolCall[];
  rounds: number;
}

export interface SessionOptions {
  request: ChatRequest;
  upstream: UpstreamTarget;
  /** Merged into every upstream body (e.g. `skip_special_tokens: false` for special-token formats). */
  upstreamOverrides?: Record<string, unknown>;
  /** How the conversation is written for the upstream (a Mistral-format model wants nine-character tool-call ids). */
  upstreamMessages?: (messages: ChatMessage[]) => ChatMessage[];
  tools: ReadonlyMap<string, ToolPlugin>;
  /** How tool results go back to the model (GatewayConfig `observations`); default `tool`. */
  observations?: 'tool' | 'user';
  createParser: (round: number) => ToolCallParser;
  partialExecution: boolean;
  maxRounds: number;
  /**
   * When a tool rejects a call mid-decode (the decode is cut short either way): `reprompt` feeds
   * the rejection back to the model as the tool's observation for another round; `error` ends the
   * request with a tool_rejected error.
   */
  onToolReject: 'reprompt' | 'error';
  /** Early JSON-Schema checks of calls the client executes (request `validate_tool_arguments`). */
  clientToolValidator?: ClientToolValidator;
  timeline: Timeline;
  /** The request's one abort signal, linked to the client connection. */
  signal: AbortSignal;
  onEvent: (event: SessionEvent) => void;
  /** Wraps the hand-over of several tokens read at once, so their events can leave in one write (llm-client's `batchDelivery`). */
  batchDelivery?: (deliver: () => void) => void;
}

/**
 * The request's scheduler: runs rounds of upstream decode → parser → Dispatcher → tools until the
 * model answers without a tool call. Partial execution on or off goes through this same code.
 */
export async function runSession(opts: SessionOptions): Promise<SessionResult> {
  const appended: ChatMessage[] = [];
  const usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let content = '';
  let reasoning = '';
  const emitContent = (text: string) => {
    content += text;
    opts.onEvent({ type: 'content', text });
  };
  // With several upstream replicas, every round returns to the one that served the first: it
  // holds the conversation so far in its prefix cache.
  const affinity: ReplicaAffinity | undefined = opts.upstream.conversationAffinity === false ? undefined : {};
  const sessionOpts: SessionOptions = {
    ...opts,
    onEvent: (event) => {
      if (event.type === 'reasoning') reasoning += event.text;
      opts.onEvent(event);
    },
  };

  // max_tokens bounds the whole answer, all rounds together: each round may use what is left.
  // A round the gateway cut short has no usage from the upstream (unless it sent usage on every
  // chunk): its streamed deltas count then (one token each from vLLM: a lower bound), so rejects
  // cannot decode past the budget.
  const budget = opts.request.max_completion_tokens ?? opts.request.max_tokens ?? undefined;
  let spent = 0;
  for (let round = 1; ; round++) {
    let firstText = true;
    const tokensLeft = budget === undefined ? undefined : budget - spent;
    const out = await runRound(sessionOpts, round, affinity, [...opts.request.messages, ...appended], tokensLeft, (text) => {
      // Rounds are joined by a blank line so the client's markdown does not glue a closing fence
      // to the next round's first word. This is the gateway's only addition to the model's text.
      if (firstText && content !== '' && !content.endsWith('\n\n')) emitContent(content.endsWith('\n') ? '\n' : '\n\n');
      firstText = false;
      emitContent(text);
    });
    addUsage(usage, out.usage);
    spent += out.usage?.completion_tokens ?? out.deltas;
    const answered = out.calls.length === 0 && out.clientCalls.length === 0;
    const done = (finishReason: SessionResult['finishReason'], stopReason: StopReason): SessionResult => ({
      content,
      reasoning,
      finishReason,
      stopReason,
      usage,
      messages: appended,
      ...(answered ? { answer: out.text } : {}),
      clientToolCalls: out.clientCalls,
      rounds: round,
    });
    if (answered) {
      return out.finishReason === 'length' ? done('length', 'length') : done('stop', 'answer');
    }
    appended.push(...roundMessages(out.text, out.calls, out.clientCalls, opts.observations ?? 'tool'));
    if (out.clientCalls.length > 0) return done('tool_calls', 'client_tool_calls');
    if (out.finishReason === 'length') return done('length', 'length');
    if (round >= opts.maxRounds) return done('length', 'max_tool_rounds');
    if (budget !== undefined && spent >= budget) return done('length', 'length');
  }
}

interface RoundOutput {
  text: string;
  calls: CallOutcome[];
  clientCalls: ClientToolCall[];
  finishReason: string;
  usage?: Usage;
  /** Text and tool-call deltas the upstream streamed in this round. */
  deltas: number;
}

async function runRound(
  opts: SessionOptions,
  round: number,
  affinity: ReplicaAffinity | undefined,
  messages: ChatMessage[],
  maxTokens: number | undefined,
  emitText: (t: string) => void,
): Promise<RoundOutput> {
  const { timeline, onEvent, signal } = opts;
  timeline.mark('round-start', { round });
  onEvent({ type: 'round-start', round });
  // The request goes out first, ahead of everything else this round needs. Parts only ever arrive
  // from a later socket read, never from inside this call, so onPart can refer to what follows.
  let stream: UpstreamStream;
  try {
    stream = opts.upstream.pump(
      {
        body: upstreamBody({
          request: opts.request,
          overrides: opts.upstreamOverrides,
          model: opts.upstream.model,
          round,
          messages: opts.upstreamMessages ? opts.upstreamMessages(messages) : messages,
          maxTokens,
          continuousUsage: opts.upstream.continuousUsage,
        }),
        signal,
        onAccepted: ({ baseUrl }) => {
          timeline.mark('upstream-accepted', { round, detail: baseUrl });
          onEvent({ type: 'upstream-accepted', round });
        },
        batchDelivery: opts.batchDelivery,
        affinity,
      },
      (part) => onPart(part),
    );
  } catch (err) {
    throw signal.aborted ? new ClientAbortedError() : err;
  }
  // A reject verdict cuts only this round's decode short (the stream's own abort); the request's
  // signal still cancels everything.
  let rejection: { name: string; reason: string } | undefined;
  function rejectCall(call: { callId: string; name: string }, reason: string): void {
    rejection ??= { name: call.name, reason };
    timeline.mark('abort', { round, callId: call.callId, detail: `rejected: ${reason}` });
    stream.abort(new Error(reason));
  }
  // parallel_tool_calls: false. vLLM drops the calls after the first once they are decoded; the
  // parser sees the second begin, so its decode is not paid for at all.
  let cutAtSecondCall = false;
  function cutSecondCall(call: { name: string }): void {
    cutAtSecondCall = true;
    timeline.mark('abort', { round, detail: `parallel_tool_calls is false: cut where a second call (${call.name}) began` });
    stream.abort(new Error('parallel_tool_calls is false'));
  }
  // The round's machinery is built just after undici has written the request (undici writes from
  // a setImmediate queued inside the dispatch above, so this one runs next) and while the upstream
  // prefills: built here, synchronously, it held the request back by its own cost (~0.15 ms on an
  // idle core). Whatever needs it earlier builds it then: onPart (a socket read, which can come
  // before that immediate only if the round started inside one) or the end of the round.
  let machinery: { dispatcher: Dispatcher; clientCalls: ClientCalls; parser: RoundParser } | undefined;
  let buildError: { error: unknown } | undefined;
  const build = (): NonNullable<typeof machinery> => {
    if (machinery) return machinery;
    if (buildError) throw buildError.error;
    try {
      const dispatcher = new Dispatcher({
        tools: opts.tools,
        partialExecution: opts.partialExecution,
        signal,
        timeline,
        round,
        onProgress: (call, progress) => onEvent({ type: 'tool-progress', ...call, progress }),
        onReject: (call, reason) => rejectCall(call, reason),
      });
      const clientCalls = new ClientCalls(onEvent);
      const parser = new RoundParser({
        round,
        parser: opts.createParser(round),
        tools: opts.tools,
        dispatcher,
        clientCalls,
        timeline,
        onEvent,
        emitText,
        validator: opts.clientToolValidator,
        onClientReject: rejectCall,
        onSecondCall: opts.request.parallel_tool_calls === false ? cutSecondCall : undefined,
      });
      machinery = { dispatcher, clientCalls, parser };
      return machinery;
    } catch (error) {
      buildError = { error };
      stream.abort(error);
      throw error;
    }
  };
  setImmediate(() => {
    try {
      build();
    } catch {
      // The stream was aborted with the error; the round rethrows it below.
    }
  });
  let finishReason = 'stop';
  let usage: Usage | undefined;
  let deltas = 0;
  let firstToken = true;
  // Called synchronously from the socket read that carried the part: the token's whole way to
  // the client (parser, SSE chunk, write) runs in that one call stack.
  const onPart = (part: UpstreamPart): void => {
    if (part.type === 'content' || part.type === 'reasoning' || part.type === 'tool-call-delta') {
      deltas++;
      if (firstToken) {
        firstToken = false;
        timeline.mark('first-token', { round });
      }
    }
    if (part.type === 'content') (machinery ?? build()).parser.text(part.text);
    else if (part.type === 'reasoning') onEvent({ type: 'reasoning', text: part.text });
    else if (part.type === 'tool-call-delta') (machinery ?? build()).parser.toolCallDelta(part);
    else if (part.type === 'finish') finishReason = part.reason;
    else if (part.type === 'usage') usage = part.usage;
  };

  try {
    await stream.done;
  } catch (err) {
    if (buildError) throw buildError.error;
    if (signal.aborted) {
      machinery?.dispatcher.abortAll('client aborted');
      timeline.mark('abort', { round, detail: 'client aborted' });
      throw new ClientAbortedError();
    }
    if (!rejection && !cutAtSecondCall) {
      machinery?.dispatcher.abortAll('upstream failed');
      throw err;
    }
    finishReason = rejection ? 'tool_rejected' : 'tool_calls';
  }
  const { dispatcher, clientCalls, parser } = build();
  // A rejected call was cut off by us, not by the model: flushing the parser would report it as
  // truncated and release its raw text as content. The Dispatcher answers it with the rejection.
  if (!rejection) parser.end();
  timeline.mark('decode-end', { round, detail: finishReason });
  // A client call that failed early validation is answered, like a rejected gateway call, with
  // the reason, so a re-prompt shows the model what was wrong.
  const calls = [
    ...(await dispatcher.settle()),
    ...clientCalls.rejected().map((c) => ({ callId: c.callId, name: c.name, args: {}, result: { ok: false, content: `error: ${c.name} rejected the call: ${c.reason}` } })),
  ];
  if (signal.aborted) throw new ClientAbortedError();
  if (rejection && opts.onToolReject === 'error') throw new ToolRejectedError(rejection.name, rejection.reason);
  for (const c of calls) onEvent({ type: 'tool-result', round, callId: c.callId, name: c.name, ok: c.result.ok, content: c.result.content });
  timeline.mark('round-end', { round, detail: finishReason });
  onEvent({ type: 'round-end', round, finishReason });
  return { text: parser.visibleText, calls, clientCalls: clientCalls.completed(), finishReason, usage, deltas };
}

function addUsage(total: Usage, add: Usage | undefined): void {
  if (!add) return;
  total.prompt_tokens += add.prompt_tokens;
  total.completion_tokens += add.completion_tokens;
  total.total_tokens += add.total_tokens;
}
