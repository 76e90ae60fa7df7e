import type { ChatCompletionPump } from '../llm-client/pump-chat-completion.ts';
import type { UpstreamUsage } from '../llm-client/upstream-parts.ts';
import type { ReplicaAffinity } from '../llm-client/upstream-replicas.ts';
import { NO_USAGE, sumUsage } from '../llm-client/usage-counts.ts';
import type { ToolCallParser } from '../parsers/parser-events.ts';
import type { ToolPlugin, ToolProgress } from '../plugins/plugin-types.ts';
import type { ChatMessage, ChatRequest } from './chat-request-schema.ts';
import type { ClientKeyId } from './client-auth.ts';
import type { ClientToolCall } from './client-calls.ts';
import type { ClientToolValidator } from './client-tool-validator.ts';
import { conversationKey } from './conversation-key.ts';
import { failureAfterTools } from './failure-after-tools.ts';
import { observationCapToFit, recutRound } from './observation-fit.ts';
import { modelTurns, roundPrompt } from './prefill-turn.ts';
import { roundJoiner } from './round-joiner.ts';
import { roundMessages } from './round-messages.ts';
import { runRound, type RoundOutput } from './session-round.ts';
import type { Timeline } from './timeline.ts';

export interface UpstreamTarget {
  /** Streams to the upstream (or its replicas), its connection options checked once (`createChatCompletionPump`). */
  pump: ChatCompletionPump;
  /** When set, every upstream request names this model whatever the client asked for. */
  model?: string;
  /** Replicas only: false sends every round, and every turn, to the least loaded replica instead of the conversation's own. */
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
  /** `undeclared`: the gateway refusing a call to a tool the request does not have (undeclared-tools.ts), not a tool running. */
  | { type: 'tool-call'; round: number; callId: string; name: string; undeclared?: true }
  | { type: 'tool-progress'; callId: string; name: string; progress: ToolProgress }
  | { type: 'tool-result'; round: number; callId: string; name: string; ok: boolean; content: string; data?: Record<string, unknown>; undeclared?: true }
  /**
   * A started gateway call that turned out not to be one (malformed, or cut by the token limit
   * before the model finished it): it has no observation, so no tool-result follows. With
   * tool-result, one of the two terminal events every tool-call gets.
   */
  | { type: 'tool-cancelled'; round: number; callId: string; name: string; reason: string }
  /** A call the client executes itself: streamed as standard OpenAI `tool_calls` deltas. */
  | { type: 'client-call-start'; index: number; callId: string; name: string }
  | { type: 'client-call-args'; index: number; text: string }
  | { type: 'round-end'; round: number; finishReason: string }
  /**
   * The upstream's usage for this round so far: once, at its end, or on every chunk when it was
   * asked for `continuous_usage_stats`, ahead of the events that chunk's tokens cause.
   */
  | { type: 'usage'; round: number; usage: Usage };

/** The upstream's counts, all rounds added up (usage-counts.ts). */
export type Usage = UpstreamUsage;

export type StopReason = 'answer' | 'length' | 'max_tool_rounds' | 'client_tool_calls';

export interface SessionResult {
  /** Everything the client was sent as content, all rounds, in order. */
  content: string;
  /** Reasoning text (upstream `reasoning_content` or a parsed `<think>` block), all rounds. */
  reasoning: string;
  /** OpenAI's: `content_filter` passes through from the upstream; its other reasons read as `stop` (vLLM's `abort` is an error, chat-chunk-decoder.ts). */
  finishReason: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  stopReason: StopReason;
  /** The client's stop string that ended the answer (vLLM's `stop_reason`), when one did. */
  stopString?: string;
  /** The stop token that ended the answer (vLLM's integer `stop_reason`), when one in the stop list did. */
  stopTokenId?: number;
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
  /** The longest tool result the model is shown (GatewayConfig `maxObservationChars`); default DEFAULT_MAX_OBSERVATION_CHARS. */
  maxObservationChars?: number;
  createParser: (round: number) => ToolCallParser;
  /** The parser takes `<think>` blocks out of the text (ParserChoice.reasoning): a tool round's block goes back into its turn (RoundReasoning). */
  thinkTags?: boolean;
  /**
   * The start of the ids of a round's calls (`call_…_r2_`), which the parser numbers on; also the
   * ids of calls the upstream parsed (`…tc1`). Unique per request, so no two turns of a
   * conversation share one. Default `call_r<round>_`.
   */
  callIdPrefix?: (round: number) => string;
  partialExecution: boolean;
  maxRounds: number;
  /** The most tool calls one round may start (config maxToolCallsPerRound); undefined: no limit. */
  maxCallsPerRound?: number;
  /**
   * When a tool rejects a call mid-decode (the decode is cut short either way): `reprompt` feeds
   * the rejection back to the model as the tool's observation for another round; `error` ends the
   * request with a tool_rejected error.
   */
  onToolReject: 'reprompt' | 'error';
  /** Early JSON-Schema checks of calls the client executes (request `validate_tool_arguments`). */
  clientToolValidator?: ClientToolValidator;
  /**
   * Pass-through (`tool_parser` or `tool_choice` "none"): a call the upstream parsed itself is the
   * model's output passed on, to a name the request lists or not; none is refused (undeclared-tools.ts).
   */
  passThrough?: boolean;
  timeline: Timeline;
  /** The request's one abort signal, linked to the client connection. */
  signal: AbortSignal;
  /** Whose request this is (the API key's id): its tool calls run as that key's (ToolCallContext.tenant). */
  clientKey?: ClientKeyId;
  onEvent: (event: SessionEvent) => void;
  /** Wraps the hand-over of several tokens read at once, so their events can leave in one write (llm-client's `batchDelivery`). */
  batchDelivery?: (deliver: () => void) => void;
  /** The client's side of flow control: while it is `blocked` the round stops reading its upstream (SseWriter). */
  clientFlow?: ClientFlow;
}

/** A consumer of the session's events that can fall behind (a streamed response to a slow reader). */
export interface ClientFlow {
  readonly blocked: boolean;
  /** Calls `resume` once the consumer takes events again, or has gone. */
  onDrained(resume: () => void): void;
}

/**
 * The request's scheduler: runs rounds of upstream decode → parser → Dispatcher → tools until the
 * model answers without a tool call. Partial execution on or off goes through this same code.
 */
export async function runSession(opts: SessionOptions): Promise<SessionResult> {
  const appended: ChatMessage[] = [];
  // The rounds that called tools, as decoded: `appended` is rebuilt from them when a later round's
  // prompt must have their results cut shorter (observationCap, in bytes) to fit the context.
  const toolRounds: RoundOutput[] = [];
  let observationCap: number | undefined;
  let usage: Usage = NO_USAGE;
  let content = '';
  let reasoning = '';
  const emitContent = (text: string) => {
    content += text;
    opts.onEvent({ type: 'content', text });
  };
  // With several upstream replicas, every round returns to the one that served the first, and a
  // later turn's first to the one that served the client's previous turn: it holds the
  // conversation so far in its prefix cache. A first turn (no assistant message yet) goes to the
  // least loaded: conversations that open alike would otherwise all pile onto one replica.
  const replicas = opts.upstream.conversationAffinity === false ? undefined : opts.upstream.pump.replicas;
  const key = replicas && conversationKey(opts.request);
  const laterTurn = opts.request.messages.some((m) => m.role === 'assistant');
  const affinity: ReplicaAffinity | undefined = replicas && { baseUrl: key && laterTurn ? replicas.conversations.replicaOf(key) : undefined };
  let roundNow = 0;
  let reasoningRound = 0;
  const sessionOpts: SessionOptions = {
    ...opts,
    onEvent: (event) => {
      if (event.type === 'round-start') roundNow = event.round;
      else if (event.type === 'reasoning') {
        // A later round's reasoning starts a paragraph, as its text does (emitText below; stop
        // strings bound the reasoning too): glued, round 1's "I should compute." and round 2's
        // "It said 4." read as one thought.
        if (reasoningRound !== roundNow && reasoning.trim() !== '' && !reasoning.endsWith('\n\n')) {
          const glue = roundJoiner(reasoning, event.text, opts.request.stop);
          reasoning += glue;
          if (glue !== '') opts.onEvent({ type: 'reasoning', text: glue });
        }
        reasoningRound = roundNow;
        reasoning += event.text;
      }
      opts.onEvent(event);
    },
  };

  // max_tokens bounds the whole answer, all rounds together: each round may use what is left, or
  // less where the prompt, grown by the rounds before, leaves less of the context (runRound sends
  // such a round again with what fits). A round the gateway cut short has no usage from the
  // upstream (unless it sent usage on every chunk): its streamed deltas count then (one token each
  // from vLLM: a lower bound), so rejects cannot decode past the budget.
  const budget = opts.request.max_completion_tokens ?? opts.request.max_tokens ?? undefined;
  // vLLM's min_tokens bounds it from below the same way: a later round is asked for what the
  // rounds before left of it. Sent as the client wrote it, a later round asked for more at least
  // than its max_tokens allows at most, and vLLM refused the round (400) after the tools had run.
  const minTokens = (opts.request as { min_tokens?: unknown }).min_tokens;
  const floor = typeof minTokens === 'number' && Number.isInteger(minTokens) && minTokens > 0 ? minTokens : undefined;
  let spent = 0;
  const clientCallIndices = { next: 0 };
  try {
    for (let round = 1; ; round++) {
      let firstText = true;
      const tokensLeft = budget === undefined ? undefined : budget - spent;
      const out = await runRound(sessionOpts, round, {
        affinity,
        messages: roundPrompt(opts.request, appended),
        maxTokens: tokensLeft,
        // Round 1 sends the client's own (vLLM refuses one above max_tokens: the client's error to hear).
        ...(floor !== undefined && round > 1 ? { minTokens: Math.max(0, floor - spent) } : {}),
        emitText: (text) => {
          // Rounds are joined by a blank line (roundJoiner: less where the client's stop strings
          // would be in it). This is the gateway's only addition to the model's text, and only
          // after text: the whitespace between a round's calls glues nothing, and a blank line
          // after it opened the answer with "\n\n".
          if (firstText && content.trim() !== '' && !content.endsWith('\n\n')) {
            const joiner = roundJoiner(content, text, opts.request.stop);
            if (joiner !== '') emitContent(joiner);
          }
          firstText = false;
          emitContent(text);
        },
        clientCallIndices,
        fitToContext: (limits) => {
          // As the prompt the refusal measured has them: after a first cut, the refusal's excess is
          // over those cut results, and measured against the uncut ones a second cut freed too little.
          const results = toolRounds.flatMap((r) => (observationCap === undefined ? r : recutRound(r, observationCap)).calls.map((c) => c.result.content));
          const cap = observationCapToFit(limits, roundPrompt(opts.request, appended), results, tokensLeft);
          if (cap === undefined || (observationCap !== undefined && cap >= observationCap)) return undefined;
          observationCap = cap;
          appended.splice(0, appended.length, ...toolRounds.flatMap((r) => roundMessages(recutRound(r, cap), opts.observations ?? 'tool')));
          return { messages: roundPrompt(opts.request, appended), cap };
        },
      }).catch((err: unknown) => {
        throw failureAfterTools(err, round, opts.timeline);
      });
      if (out.usage) usage = sumUsage(usage, out.usage);
      spent += out.usage?.completion_tokens ?? out.deltas;
      const answered = out.calls.length === 0 && out.clientCalls.length === 0;
      const done = (finishReason: SessionResult['finishReason'], stopReason: StopReason): SessionResult => ({
        content,
        reasoning,
        finishReason,
        stopReason,
        // Only for an answer it ended: one that ended a tool round cut that round's call, and the rounds went on.
        ...(finishReason === 'stop' && answered && out.stopString !== undefined ? { stopString: out.stopString } : {}),
        ...(finishReason === 'stop' && answered && out.stopTokenId !== undefined ? { stopTokenId: out.stopTokenId } : {}),
        usage,
        messages: modelTurns(opts.request, appended),
        ...(answered ? { answer: out.text } : {}),
        clientToolCalls: out.clientCalls,
        rounds: round,
      });
      if (answered) {
        if (out.finishReason === 'length') return done('length', 'length');
        return done(out.finishReason === 'content_filter' ? 'content_filter' : 'stop', 'answer');
      }
      toolRounds.push(out);
      appended.push(...roundMessages(observationCap === undefined ? out : recutRound(out, observationCap), opts.observations ?? 'tool'));
      // The token limit's cut says `length` even after whole client calls: a streaming client may
      // already hold the first deltas of the call it cut, and goes by finish_reason (as OpenAI's
      // does) to leave that call unrun. The stop reason stays, so the turns are kept for its next turn.
      if (out.clientCalls.length > 0) return done(out.finishReason === 'length' ? 'length' : 'tool_calls', 'client_tool_calls');
      if (out.finishReason === 'length') return done('length', 'length');
      if (round >= opts.maxRounds) return done('length', 'max_tool_rounds');
      if (budget !== undefined && spent >= budget) return done('length', 'length');
    }
  } finally {
    if (key !== undefined && affinity?.baseUrl !== undefined) replicas?.conversations.remember(key, affinity.baseUrl);
  }
}
