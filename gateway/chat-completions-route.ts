import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BoundedQueue } from '../core/bounded-queue.ts';
import { ClientAbortedError, UpstreamModelNotFoundError, UpstreamModelNotServedError } from '../core/errors.ts';
import { isJsonObject } from '../core/json-object.ts';
import type { ToolPlugin } from '../plugins/plugin-types.ts';
import { chatRequestSchema, type ChatRequest } from './chat-request-schema.ts';
import { chatSessionOptions } from './chat-session-options.ts';
import { gatewayToolsFor, withPluginSchemas } from './request-tools.ts';
import { ChatChunkWriter } from './chat-chunk-writer.ts';
import { armClientStall } from './client-stall.ts';
import type { AccessLog, CompletionFacts } from './access-log.ts';
import type { ClientKeyId } from './client-auth.ts';
import type { DroppedToolTurns } from './dropped-tool-turns.ts';
import type { GatewayConfig } from './config.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';
import { toErrorResponse } from './error-response.ts';
import { readJsonBody } from './request-body.ts';
import { newRequestId, OPENAI_REQUEST_ID_HEADER, REQUEST_ID_HEADER } from './request-id.ts';
import { runSession, type SessionEvent, type SessionResult, type UpstreamTarget } from './session.ts';
import { SseWriter } from './sse-writer.ts';
import { Timeline } from './timeline.ts';
import type { TimelineStore } from './timeline-store.ts';
import { sendJson } from './send-json.ts';
import { completionBody } from './chat-completion-body.ts';
import { admitted } from './request-admission.ts';
import { chooseParser, matchesRule, type ParserChoice } from './parser-selection.ts';
import type { ModelParents } from './model-parents.ts';

export interface ChatRouteContext {
  config: GatewayConfig;
  /** The configured upstream, its stream pump built once at start-up. */
  upstream: UpstreamTarget;
  metrics: GatewayMetrics;
  accessLog: AccessLog;
  tools: ReadonlyMap<string, ToolPlugin>;
  timelines: TimelineStore;
  /** maxConcurrentRequests' places and line, when the limit is set. */
  admission?: BoundedQueue;
  /** Aborted (with cutByShutdown) when a shutdown's grace period runs out. */
  shutdown: AbortSignal;
  /** An adapter's base model, for a model name no tool-parser rule matches. */
  modelParents: ModelParents;
  /** The gateway's tool turns of responses that ended with client calls, for the next turn of a loop that drops them. */
  droppedTurns: DroppedToolTurns;
}

/** "model: required" rather than zod's "expected string, received undefined" for a field left out. */
const missingField = (issue: { code?: string; input?: unknown }) => (issue.code === 'invalid_type' && issue.input === undefined ? 'required' : undefined);

/**
 * POST /v1/chat/completions: validate, open a Session, answer as SSE chunks or one JSON body.
 * `key`: the id of the API key the request came with (ClientKeyId); its tools' kept processes,
 * its timeline and its dropped tool turns are that key's.
 */
export async function chatCompletionsRoute(ctx: ChatRouteContext, req: IncomingMessage, res: ServerResponse, key: ClientKeyId = undefined): Promise<void> {
  // On every answer, errors included, so a client can quote it and an operator find its timeline.
  const requestId = newRequestId();
  res.setHeader(REQUEST_ID_HEADER, requestId);
  res.setHeader(OPENAI_REQUEST_ID_HEADER, requestId);
  // From the request's arrival, so that its times (TTFT, duration) count the body's reading and
  // checks, and a refused request still has the timeline its id names.
  const timeline = new Timeline(requestId);
  ctx.timelines.add(timeline, key);
  const refused = (err: unknown): void => {
    const code = toErrorResponse(err).body.error.code;
    timeline.mark('request-end', { detail: code });
    ctx.metrics.requestRefused(code);
  };
  let request: ChatRequest;
  let tools: ReadonlyMap<string, ToolPlugin>;
  let parsed: ParserChoice;
  try {
    const body = withServedModel(await readJsonBody(req, ctx.config.maxBodyBytes), ctx.config.upstream.model);
    const checked = chatRequestSchema.safeParse(body);
    // Worded again only when it failed: a parse given an error map costs ~2.5 µs more on every request.
    if (!checked.success) throw chatRequestSchema.safeParse(body, { error: missingField }).error;
    // Before the schemas are filled in: a tool named alone is the gateway's, one described is the client's.
    tools = gatewayToolsFor(checked.data, ctx.tools);
    request = withPluginSchemas(checked.data, tools);
    const messages = ctx.droppedTurns.restore(key, request.messages);
    if (messages !== request.messages) {
      request = { ...request, messages };
      timeline.mark('history-restored', { detail: "the gateway's tool turns the client's history left out" });
    }
    const model = ctx.config.upstream.model ?? request.model;
    // A LoRA adapter (`sql-lora`) writes its base model's format: asked of the upstream only for a name no rule knows.
    const parent = request.tool_parser || matchesRule(ctx.config, model) ? undefined : await ctx.modelParents.parentOf(model);
    parsed = chooseParser(ctx.config, parent ?? model, request.tool_parser, (request as { chat_template_kwargs?: unknown }).chat_template_kwargs);
  } catch (err) {
    refused(err);
    throw err;
  }
  const partialExecution = request.partial_execution ?? ctx.config.partialExecution;
  const facts: CompletionFacts = { timeline, model: request.model, stream: request.stream, partialExecution };
  ctx.accessLog.describe(res, facts);
  let release: () => void;
  try {
    // A request still waiting in line when a shutdown's grace runs out is turned away (503
    // gateway_shutting_down) rather than let in, and upstream, as the running ones are cut.
    const inLine = performance.now();
    let waited = false;
    const waitedFor = (): void => {
      waited = true;
      timeline.mark('admitted');
    };
    release = await admitted(ctx.admission, res, { waited: waitedFor, cancel: ctx.shutdown });
    ctx.metrics.admitted(waited ? (performance.now() - inLine) / 1000 : 0);
  } catch (err) {
    refused(err);
    throw err;
  }
  ctx.metrics.requestStarted();
  try {
    await answer(ctx, { request, gatewayTools: tools, parsed, facts, key }, res);
  } finally {
    release();
    // A request refused before its session began (an unknown tool_parser, a tool schema that does
    // not compile) still ends its timeline, so a follower of its events is not left waiting.
    if (!timeline.ended) timeline.mark('request-end', { detail: 'error' });
    ctx.metrics.requestEnded(timeline);
  }
}

/** An admitted completion: its request, checked, and what the route chose for it. */
interface Admitted {
  request: ChatRequest;
  gatewayTools: ReadonlyMap<string, ToolPlugin>;
  parsed: ParserChoice;
  /** Its access-line facts, which also carry its timeline; a stream's closing error is added. */
  facts: CompletionFacts;
  /** The API key it came with. */
  key: ClientKeyId;
}

async function answer(ctx: ChatRouteContext, { request, gatewayTools, parsed, facts, key }: Admitted, res: ServerResponse): Promise<void> {
  const { timeline, partialExecution } = facts;
  const id = timeline.requestId;
  // When the request arrived, as OpenAI's and vLLM's `created` say, not when its tool rounds (or
  // its wait for a place) ended: the same in a stream's chunks and a non-streamed body.
  const created = Math.floor(Date.parse(timeline.startedAt) / 1000);
  // The request's one abort signal: the client going away cancels the decode and kills its tools,
  // and so does the end of a shutdown's grace period, which the client is then told of.
  const cancel = new AbortController();
  const cut = () => cancel.abort(ctx.shutdown.reason);
  ctx.shutdown.addEventListener('abort', cut, { once: true });
  const left = (): void => {
    ctx.shutdown.removeEventListener('abort', cut);
    if (!res.writableFinished) cancel.abort(new ClientAbortedError());
  };
  // A client can leave before this listener is there (while the route waited on an adapter's
  // model look-up): its 'close' has been and gone, and its answer would be decoded, tools and all, for no one.
  if (res.destroyed) left();
  else res.once('close', left);
  // What the session throws once the signal is aborted is the client's leaving; the reason says which it was.
  const failure = (err: unknown): unknown => (cancel.signal.aborted ? cancel.signal.reason : modelOfGateway(ctx.config.upstream.model, err));

  const sessionBase = chatSessionOptions({ config: ctx.config, upstream: ctx.upstream, request, gatewayTools, parsed, partialExecution, timeline, signal: cancel.signal, clientKey: key });

  // The model that answers, as OpenAI's answers name it: with --model, whatever name the client
  // sent, the one model the gateway serves (and lists at /v1/models).
  const answeredBy = ctx.config.upstream.model ?? request.model;

  if (!request.stream) {
    try {
      const result = await runSession({ ...sessionBase, onEvent: () => {} });
      keepDroppedTurns(ctx, key, result);
      timeline.mark('request-end', { detail: result.stopReason });
      sendJson(res, 200, completionBody(id, created, answeredBy, result, partialExecution));
    } catch (err) {
      timeline.mark('request-end', { detail: errorCode(failure(err)) });
      // The official SDKs retry a 5xx (twice by default) by sending the whole request again: its
      // tools would run again, effects and all. Told not to, they honour this before the status.
      if (timeline.first('tool-start')) res.setHeader('x-should-retry', 'false');
      throw failure(err);
    }
    return;
  }

  // Headers go out once the upstream has accepted the request (its own 200 and event-stream
  // headers, which vLLM sends before it prefills), so a request it refuses or cannot be reached
  // for (upstream down, bad model name, prompt too long) still gets a real HTTP error status
  // instead of a 200 with an error chunk; and the first token then finds the response open,
  // its headers and role chunk already sent, instead of sending them on its own way out.
  let writer: ChatChunkWriter | undefined;
  let sse: SseWriter | undefined;
  const early: SessionEvent[] = [];
  const open = (): ChatChunkWriter => {
    if (writer) return writer;
    sse = new SseWriter(res);
    writer = new ChatChunkWriter(sse, id, answeredBy, {
      created,
      includeUsage: request.stream_options?.include_usage === true,
      continuousUsage: request.stream_options?.include_usage === true && request.stream_options.continuous_usage_stats === true,
      conveyorEvents: request.conveyor_events !== false,
      clock: timeline,
    });
    writer.start();
    for (const e of early.splice(0)) writer.event(e);
    return writer;
  };
  try {
    const result = await runSession({
      ...sessionBase,
      onEvent: (e) => {
        if (!writer && e.type === 'round-start') early.push(e);
        else if (e.type === 'upstream-accepted') open();
        else open().event(e);
      },
      batchDelivery: (deliver) => (writer ? writer.group(deliver) : deliver()),
      clientFlow: {
        get blocked() {
          return sse?.blocked ?? false;
        },
        onDrained: (resume) => {
          if (!sse) return resume();
          const stallMs = ctx.config.clientStallMs;
          const drained = armClientStall(res, stallMs, () => timeline.mark('abort', { detail: `client stalled: it took nothing for ${stallMs} ms` }));
          sse.onDrained(() => {
            drained();
            resume();
          });
        },
      },
    });
    keepDroppedTurns(ctx, key, result);
    timeline.mark('request-end', { detail: result.stopReason });
    open().finish(result);
  } catch (thrown) {
    const err = failure(thrown);
    timeline.mark('request-end', { detail: errorCode(err) });
    if (err instanceof ClientAbortedError) return;
    if (!writer) throw err;
    ctx.accessLog.unexpected(err, { request_id: id });
    ctx.accessLog.errorSent(res, err);
    const { body } = toErrorResponse(err);
    facts.streamError = body.error.code;
    writer.fail(body);
  }
}

/** A response that ends with calls for the client: its turns, for a next turn that leaves the gateway's out. */
function keepDroppedTurns(ctx: ChatRouteContext, key: ClientKeyId, result: SessionResult): void {
  if (result.stopReason === 'client_tool_calls') ctx.droppedTurns.remember(key, result.clientToolCalls, result.messages);
}

/** The upstream's "no such model" for the model the gateway names, not the client: the gateway's failure. */
function modelOfGateway(model: string | undefined, err: unknown): unknown {
  return model !== undefined && err instanceof UpstreamModelNotFoundError ? new UpstreamModelNotServedError(model, err.message) : err;
}

/** The code the client was answered with (error-response.ts), for the timeline and the metrics: a bug's `internal_error`, not `error` or a Node `ERR_*`. */
function errorCode(err: unknown): string {
  return toErrorResponse(err).body.error.code;
}

/**
 * A body without `model` is for the one model the gateway names itself (--model), as vLLM takes
 * one for the model it serves; without --model the name is the client's to give, and required.
 */
function withServedModel(body: unknown, served: string | undefined): unknown {
  return served !== undefined && isJsonObject(body) && body['model'] === undefined ? { ...body, model: served } : body;
}
