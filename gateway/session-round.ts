import { ClientAbortedError, ToolRejectedError } from '../core/errors.ts';
import type { UpstreamStream } from '../llm-client/pump-chat-completion.ts';
import type { ReplicaAffinity } from '../llm-client/upstream-replicas.ts';
import type { ReasoningField, UpstreamPart } from '../llm-client/upstream-parts.ts';
import type { ChatMessage } from './chat-request-schema.ts';
import { ClientCalls, type ClientToolCall } from './client-calls.ts';
import type { CallOutcome } from './dispatched-call.ts';
import { Dispatcher } from './dispatcher.ts';
import type { RoundReasoning } from './round-messages.ts';
import { RoundCuts } from './round-cuts.ts';
import { RoundParser } from './round-parser.ts';
import { sendRound } from './round-request.ts';
import { RoundResend, type RoundResendOptions } from './round-resend.ts';
import { DEFAULT_MAX_OBSERVATION_CHARS } from './observation-cap.ts';
import type { ClientFlow, SessionOptions, Usage } from './session.ts';
import { undeclaredToolCheck } from './undeclared-tools.ts';

/** What one round leaves for the session's loop (session.ts) to decide the next step with. */
export interface RoundOutput {
  text: string;
  calls: CallOutcome[];
  clientCalls: ClientToolCall[];
  /** Every call's id, in the order the model began them (calls and clientCalls each keep it, but not between them). */
  callOrder: string[];
  finishReason: string;
  /** The client's stop string that ended the decode (vLLM's `stop_reason`), when one did. */
  stopString?: string;
  /** The stop token that ended the decode (vLLM's integer `stop_reason`), when one in the stop list did. */
  stopTokenId?: number;
  usage?: Usage;
  /** Text and tool-call deltas the upstream streamed in this round. */
  deltas: number;
  /** What the model thought before it wrote the round, as the next round's prompt carries it. */
  reasoning?: RoundReasoning;
}

/** What a round takes from the session beside its options. */
export interface RoundInputs {
  /** The replica that served the conversation's first round (several replicas), filled in by it. */
  affinity: ReplicaAffinity | undefined;
  messages: ChatMessage[];
  /** What is left of the request's max_tokens. */
  maxTokens: number | undefined;
  /** What is left of vLLM's min_tokens, in a later round of a request that sent it. */
  minTokens?: number;
  emitText: (text: string) => void;
  /** The session's next client `tool_calls` index (ClientCallsOptions.indices). */
  clientCallIndices: { next: number };
  /** For a prompt the upstream refused as longer than its context (round-resend.ts). */
  fitToContext?: RoundResendOptions['fitToContext'];
}

/**
 * One round of a session: the upstream decode streamed through the round's parser, each call
 * handed to its tool as its pieces close (or the decode cut short by a reject), then every call
 * settled.
 */
export async function runRound(opts: SessionOptions, round: number, inputs: RoundInputs): Promise<RoundOutput> {
  const { timeline, onEvent, signal } = opts;
  const { affinity, maxTokens, emitText } = inputs;
  let messages = inputs.messages;
  timeline.mark('round-start', { round });
  onEvent({ type: 'round-start', round });
  // The request goes out first, ahead of everything else this round needs.
  const send = (limit: number | undefined): UpstreamStream => sendRound(opts, { round, messages, maxTokens: limit, minTokens: inputs.minTokens, affinity, onPart: (part) => onPart(part) });
  let stream: UpstreamStream;
  /** The max_tokens this round's upstream request carries: what the budget leaves, or what the context does (below). */
  let roundMaxTokens = maxTokens;
  try {
    stream = send(maxTokens);
  } catch (err) {
    throw signal.aborted ? new ClientAbortedError() : err;
  }
  // A reject verdict cuts only this round's decode short (the stream's own abort); the request's
  // signal still cancels everything.
  const cuts = new RoundCuts({
    round,
    timeline,
    rejectFailsRequest: opts.onToolReject === 'error',
    oneCall: opts.request.parallel_tool_calls === false,
    maxCallsPerRound: opts.maxCallsPerRound,
    stream: () => stream,
    clientCallStreaming: () => machinery?.clientCalls.streaming === true,
    stopParser: () => machinery?.parser.stop(),
  });
  // Each result goes to the client as its call settles (its text ended, its tool answered), not
  // when the round does: a quick lookup's observation need not wait for a slow sibling. None once
  // the request is failing or over (a reject under on_tool_reject "error", the client gone, the
  // round failed): results already sent stand, as their tools did run.
  let roundFailed = false;
  let resultError: { error: unknown } | undefined;
  const emitResult = (c: CallOutcome, undeclared = false): void => {
    if (roundFailed || signal.aborted || (cuts.rejection && opts.onToolReject === 'error')) return;
    try {
      onEvent({ type: 'tool-result', round, callId: c.callId, name: c.name, ok: c.result.ok, content: c.result.content, ...(c.result.data ? { data: c.result.data } : {}), ...(undeclared ? { undeclared: true as const } : {}) });
    } catch (error) {
      // Called from a tool's settling promise: kept for the round to throw, not left unhandled.
      resultError ??= { error };
    }
  };
  const throwIfEmitFailed = (): void => {
    if (resultError) throw resultError.error;
  };
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
        tenant: opts.clientKey,
        timeline,
        round,
        onProgress: (call, progress) => onEvent({ type: 'tool-progress', ...call, progress }),
        onReject: (call, reason) => cuts.reject(call, reason),
        onResult: (outcome) => emitResult(outcome),
        rejectFailsRequest: opts.onToolReject === 'error',
        maxObservationChars: opts.maxObservationChars ?? DEFAULT_MAX_OBSERVATION_CHARS,
      });
      const clientCalls = new ClientCalls(onEvent, { holdUntilValid: opts.clientToolValidator !== undefined, indices: inputs.clientCallIndices, onCallEnded: () => cuts.clientCallEnded() });
      const parser = new RoundParser({
        round,
        callIdPrefix: opts.callIdPrefix?.(round) ?? `call_r${round}_`,
        parser: opts.createParser(round),
        tools: opts.tools,
        dispatcher,
        clientCalls,
        timeline,
        onEvent,
        emitText,
        validator: opts.clientToolValidator,
        undeclared: opts.passThrough ? undefined : undeclaredToolCheck(opts.request, opts.tools),
        onClientReject: (call, reason) => cuts.reject(call, reason),
        callLimit: cuts.callLimit === undefined ? undefined : { max: cuts.callLimit, exceeded: (call) => cuts.pastCallLimit(call) },
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
  /** A client's stop string ended the decode (vLLM's stop_reason): what it was writing is cut, as by the token limit. */
  let stopString: string | undefined;
  /** A token in the stop list ended it instead: nothing was cut, the id is only passed on (vLLM's integer stop_reason). */
  let stopTokenId: number | undefined;
  let usage: Usage | undefined;
  let deltas = 0;
  let firstToken = true;
  /** Reasoning an upstream parser sent in its own field (vLLM's `--reasoning-parser`), and that field. */
  let upstreamReasoning = '';
  let reasoningField: ReasoningField = 'reasoning_content';
  // Called synchronously from the socket read that carried the part: the token's whole way to
  // the client (parser, SSE chunk, write) runs in that one call stack.
  const onPart = (part: UpstreamPart): void => {
    const generation = part.type === 'content' || part.type === 'reasoning' || part.type === 'tool-call-delta';
    if (generation) {
      deltas++;
      if (firstToken) {
        firstToken = false;
        timeline.mark('first-token', { round });
      }
    }
    if (part.type === 'content') (machinery ?? build()).parser.text(part.text);
    else if (part.type === 'reasoning') {
      // A block the prompt opened is then not in the text: its content is not to be waited on as reasoning.
      if (upstreamReasoning === '') (machinery ?? build()).parser.upstreamReasoning();
      upstreamReasoning += part.text;
      reasoningField = part.field;
      onEvent({ type: 'reasoning', text: part.text });
    }
    else if (part.type === 'tool-call-delta') (machinery ?? build()).parser.toolCallDelta(part);
    else if (part.type === 'finish') {
      cuts.decodeFinished = true;
      finishReason = part.reason;
      stopString = part.stopString;
      stopTokenId = part.stopTokenId;
    } else if (part.type === 'usage') {
      usage = part.usage;
      onEvent({ type: 'usage', round, usage });
    }
    if (generation && opts.clientFlow?.blocked && !waitingForClient) waitForClient(opts.clientFlow);
  };
  // A client that reads slower than the model decodes: stop reading the upstream (its socket
  // fills, and vLLM merges the tokens it keeps decoding into later chunks) rather than hold the
  // rest of the answer in the gateway's memory. The idle clock stops with the read.
  let waitingForClient = false;
  const waitForClient = (flow: ClientFlow): void => {
    waitingForClient = true;
    timeline.mark('client-paused', { round, detail: `after ${deltas} tokens` });
    stream.pause();
    flow.onDrained(() => {
      waitingForClient = false;
      timeline.mark('client-resumed', { round });
      stream.resume();
    });
  };

  // A later round the upstream refused before decoding anything (its prompt grown past the context
  // by this request's calls and results) goes out again, cut to fit.
  const resend = new RoundResend({ round, maxTokens, timeline, fitToContext: inputs.fitToContext });
  // The round's usage once its stream is over, whatever ended it: its last report (on every chunk
  // with continuous usage, so a cut round counts what it decoded). Once: the resent request's.
  let counted = false;
  const countTokens = (): void => {
    if (counted || usage === undefined) return;
    counted = true;
    timeline.addTokens(usage);
  };
  try {
    for (;;) {
      try {
        await stream.done;
        break;
      } catch (err) {
        const again = resend.after(err, deltas === 0 && !signal.aborted && !buildError, roundMaxTokens);
        if (again === undefined) throw err;
        if ('messages' in again) messages = again.messages;
        else roundMaxTokens = again.maxTokens;
        stream = send(roundMaxTokens);
      }
    }
  } catch (err) {
    cuts.decodeOver = true;
    countTokens();
    roundFailed = !cuts.cutForRejection && !cuts.cutAtCallLimit;
    if (buildError) {
      roundFailed = true;
      throw buildError.error;
    }
    if (signal.aborted) {
      machinery?.dispatcher.abortAll('client aborted');
      timeline.mark('abort', { round, detail: 'client aborted' });
      throw new ClientAbortedError();
    }
    if (!cuts.cutForRejection && !cuts.cutAtCallLimit) {
      machinery?.dispatcher.abortAll('upstream failed');
      throw err;
    }
    finishReason = cuts.cutForRejection ? 'tool_rejected' : 'tool_calls';
  }
  cuts.decodeOver = cuts.decodeFinished = true;
  countTokens();
  // Whatever fails from here on (a parser's end, the client's writer) must leave no tool of this
  // round running for a request that is over.
  try {
    // vLLM reports `tool_calls` for any decode its tool parser found a call in, max_tokens cut or
    // not: a round that used its whole budget was cut, and its last call never finished.
    if (finishReason === 'tool_calls' && !cuts.cutForRejection && !cuts.cutAtCallLimit && roundMaxTokens !== undefined && (usage?.completion_tokens ?? deltas) >= roundMaxTokens) finishReason = 'length';
    const { dispatcher, clientCalls, parser } = build();
    // A rejected call was cut off by us, not by the model: flushing the parser would report it as
    // truncated and release its raw text as content. The Dispatcher answers it with the rejection.
    if (!cuts.cutForRejection) parser.end(finishReason === 'length' || stopString !== undefined);
    timeline.mark('decode-end', { round, detail: finishReason });
    // The request is about to fail with the rejection: its other calls' results would go nowhere.
    const { rejection } = cuts;
    if (rejection && opts.onToolReject === 'error') dispatcher.dropAll(rejection.undeclared ? `the request failed: the model called ${rejection.name}, which this request has no tool for` : `the request failed: ${rejection.name} rejected a call`);
    // A client call that failed early validation (or named a tool the request does not have) is
    // answered, like a rejected gateway call, with the reason, so a re-prompt shows the model what was wrong.
    const settled = await dispatcher.settle();
    throwIfEmitFailed();
    if (signal.aborted) throw new ClientAbortedError();
    if (rejection && opts.onToolReject === 'error') throw rejection.undeclared ? ToolRejectedError.undeclared(rejection.name, rejection.reason) : new ToolRejectedError(rejection.name, rejection.reason);
    // Calls the gateway refused without running them are answered once the round's own are.
    const refused = clientCalls.rejected().map((c) => ({ call: { callId: c.callId, name: c.name, args: c.args, result: { ok: false, content: c.undeclared ? `error: ${c.reason}` : `error: ${c.name} rejected the call: ${c.reason}` } }, undeclared: c.undeclared === true }));
    for (const { call, undeclared } of refused) emitResult(call, undeclared);
    throwIfEmitFailed();
    const calls: CallOutcome[] = [...settled, ...refused.map((r) => r.call)];
    timeline.mark('round-end', { round, detail: finishReason });
    onEvent({ type: 'round-end', round, finishReason });
    // Harmony's analysis channel has no markers a template takes back out of the content: only a
    // `<think>` block's reasoning goes back as text (RoundReasoning).
    // A `<think>` model's reasoning goes back in its block whoever split it off: every chat template
    // of such a model reads the block from the content, where vLLM versions differ on the field.
    let reasoning: RoundReasoning | undefined;
    if (upstreamReasoning !== '') reasoning = { text: upstreamReasoning, in: opts.thinkTags ? 'think-tags' : reasoningField };
    else if (opts.thinkTags && parser.reasoningText !== '') reasoning = { text: parser.reasoningText, in: 'think-tags' };
    return { text: parser.visibleText, calls, clientCalls: clientCalls.completed(), callOrder: parser.callOrder(), finishReason, ...(stopString !== undefined ? { stopString } : {}), ...(stopTokenId !== undefined ? { stopTokenId } : {}), usage, deltas, ...(reasoning ? { reasoning } : {}) };
  } catch (err) {
    roundFailed = true;
    // The client gone while the tools finish: they stop as they do when it leaves mid-decode.
    if (signal.aborted) timeline.mark('abort', { round, detail: 'client aborted' });
    machinery?.dispatcher.abortAll(signal.aborted ? 'client aborted' : 'the round failed');
    throw err;
  }
}
