import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { BoundedQueue } from '../core/bounded-queue.ts';
import { ChunkedBodyWriter } from '../core/chunked-body-writer.ts';
import { ClientAbortedError, thrownMessage, UpstreamConnectionError, UpstreamTotalTimeoutError } from '../core/errors.ts';
import { classifyReplicaFailure } from '../llm-client/failover-stream.ts';
import { forwardConnection, forwardRequest, type ForwardConnection, type ForwardedRequest } from '../llm-client/forward-request.ts';
import type { Replica } from '../llm-client/upstream-replicas.ts';
import type { GatewayConfig } from './config.ts';
import type { AccessLog } from './access-log.ts';
import { toErrorResponse } from './error-response.ts';
import { bodyRefusal } from './server-connection-hooks.ts';
import { armClientStall } from './client-stall.ts';
import { brokeOffByReplica, heldRefusal, recordRefusal, replicaRefusal, type ReplicaAttempt } from './forward-replica-health.ts';
import { answersWhole, forwardedBody } from './forwarded-body.ts';
import { ForwardedErrorAnswer } from './forwarded-error.ts';
import { answerHeaders, forwardedHeaders } from './forwarded-headers.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';
import { admitted } from './request-admission.ts';
import type { UpstreamTarget } from './session.ts';

export interface ForwardRouteContext {
  config: GatewayConfig;
  upstream: UpstreamTarget;
  metrics: GatewayMetrics;
  accessLog: AccessLog;
  /** maxConcurrentRequests' places and line, shared with the chat route, when the limit is set. */
  admission?: BoundedQueue;
  /** Aborted when a shutdown's grace period runs out. */
  shutdown: AbortSignal;
}

/**
 * Any `/v1/…` request the gateway does not implement itself (`/v1/completions`, `/v1/embeddings`,
 * vLLM's `/v1/score` …): passed to the upstream and its answer passed back byte for byte, status,
 * headers and body, streamed both ways (an SSE stream leaves event by event), but for an error
 * answer not in OpenAI's shape, which is rewritten into it (ForwardedErrorAnswer). No tool runs here.
 * A client that goes away cancels the upstream request, as on the chat route. When the gateway
 * names the model itself (`upstream.model`), a JSON body's `model` is replaced, so the body is read
 * first (up to `maxBodyBytes`); any other body is read first too when its length is known and at
 * most that, and streamed otherwise (an audio upload).
 *
 * With replicas, the least loaded takes it. A body held whole (or none) can be sent again, so it
 * fails over as a chat does: a replica that cannot be reached, times out before its headers or
 * answers one of its own failures (a bare 500, 401/403, 502–504, with `upstream.model` a 404
 * model_not_found) rests and the next one is tried, as one that answers 429 or a 500 that says
 * why is, until one answers otherwise or each has been tried once; the last one's answer is passed
 * back whatever it is. A streamed body goes to one replica only. An answer counts as its replica's
 * success at its first byte (forward-replica-health.ts has what counts against it after that).
 *
 * `upstream.timeouts.totalMs` bounds the whole request, attempts included, and `clientStallMs`
 * cuts off a client that takes nothing of the answer, as on the chat route. A JSON body read whole
 * that does not ask for a stream waits longer for its headers (ForwardedRequest.answersWhole).
 *
 * With maxConcurrentRequests each takes one of its places as a chat completion does (a
 * `/v1/completions` stream costs the gateway and the upstream what a chat stream does), waiting in
 * the same line, after its body is read and before anything goes upstream.
 */
export async function upstreamForwardRoute(ctx: ForwardRouteContext, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const headers = forwardedHeaders(req.headers);
  let body: Readable | Buffer | null;
  /** The JSON the body holds, where it was read whole and is plain JSON. */
  let json: unknown;
  try {
    ({ body, json } = await forwardedBody(ctx.config, req, headers));
  } catch (error) {
    // The gateway's own refusal (413, 415, 400): counted as any answer the upstream did not give.
    countForwardFailure(ctx.metrics, error);
    throw error;
  }
  const query = req.url?.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
  const cancel = abortOnClose(res, ctx.shutdown);
  // `/v1/completions` is `/completions` below the base URL; `/tokenize` is beside the base URL's /v1.
  const besideV1 = !path.startsWith('/v1/');
  const endpoint = besideV1 ? path : path.slice('/v1'.length);
  const request: ForwardedRequest = { method: req.method ?? 'GET', endpoint, query, headers, body, signal: cancel.signal, ...(besideV1 ? { besideV1 } : {}) };
  if (answersWhole(body, json)) request.answersWhole = true;
  let release: () => void;
  try {
    const inLine = performance.now();
    let waited = false;
    release = await admitted(ctx.admission, res, { waited: () => (waited = true), cancel: ctx.shutdown });
    ctx.metrics.admitted(waited ? (performance.now() - inLine) / 1000 : 0);
  } catch (error) {
    countForwardFailure(ctx.metrics, error);
    throw error;
  }
  // totalMs counts from here, as a chat's from its first attempt: the wait for a place is not the upstream's.
  request.startedAt = performance.now();
  try {
    await forwardToSome(ctx, request, res);
  } finally {
    release();
  }
}

/** To the one upstream, or over its replicas while a refusal lets another be tried. */
async function forwardToSome(ctx: ForwardRouteContext, request: ForwardedRequest, res: ServerResponse): Promise<void> {
  const replicas = ctx.upstream.pump.replicas;
  if (replicas === undefined) return forwardTo(ctx, request, res, undefined);
  const replayable = !(request.body instanceof Readable);
  const tried = new Set<Replica>();
  for (;;) {
    const replica = replicas.pick(undefined, tried)!;
    tried.add(replica);
    const last = !replayable || tried.size === replicas.replicas.length;
    try {
      return await forwardTo(ctx, request, res, { replicas, replica, last, startedAt: replicas.now() });
    } catch (error) {
      if (last || request.signal.aborted || classifyReplicaFailure(error, failureContext(ctx)) === 'final') throw error;
    }
  }
}

/**
 * One try on one upstream. Rejects before anything reached the client (so another replica may be
 * tried), or after the status line with the answer cut.
 */
async function forwardTo(ctx: ForwardRouteContext, request: ForwardedRequest, res: ServerResponse, attempt: ReplicaAttempt | undefined): Promise<void> {
  const writer = new ChunkedBodyWriter(res);
  let answered = false;
  // A replica's answer that would prove it healthy (under 400, passed on as it comes) proves it
  // only with its first byte, or its end when it has no body: the chat route's rule (its first
  // token, failover-stream.ts), since a replica whose engine is wedged still sends its headers.
  // A 4xx proves nothing: a vLLM whose engine died still answers FastAPI's 404 and 422 itself.
  let proving = false;
  let bodyStarted = false;
  const served = (): void => {
    proving = false;
    attempt?.replicas.succeeded(attempt.replica);
  };
  // An error answer, read whole before any of it goes out (it may need rewriting into OpenAI's shape).
  let held: ForwardedErrorAnswer | undefined;
  const baseUrl = attempt?.replica.baseUrl ?? (ctx.config.upstream.baseUrl as string);
  const exchange = forwardRequest(connectionTo(ctx, baseUrl), request, {
    head(status, upstreamHeaders) {
      const headers = answerHeaders(upstreamHeaders, res, baseUrl);
      if (ForwardedErrorAnswer.wanted(status, headers)) {
        // Read whole first: what it says decides whether another replica is tried (heldRefusal),
        // and it is counted when it goes out (cut before its end, the client gets the gateway's error).
        held = new ForwardedErrorAnswer(status, headers, request.method, request.besideV1 === true ? request.endpoint : `/v1${request.endpoint}`);
        answered = true;
        return;
      }
      if (attempt !== undefined) {
        // An error answer the gateway cannot read (compressed), judged by its status alone. Thrown,
        // it is dropped and its connection closed; the caller tries the next replica.
        const refusal = replicaRefusal(status);
        if (refusal !== undefined && !attempt.last) throw refusal;
        if (refusal !== undefined) recordRefusal(attempt, refusal);
        else proving = status < 400;
      }
      answered = true;
      ctx.metrics.forwarded(status);
      res.writeHead(status, headers);
      res.flushHeaders();
    },
    body(chunk) {
      if (held !== undefined) {
        held.add(chunk);
        return true;
      }
      bodyStarted = true;
      if (proving) served();
      if (writer.write(chunk)) return true;
      // Written to the socket itself after the first chunk (ChunkedBodyWriter): its drain says when.
      const drained = armClientStall(res, ctx.config.clientStallMs);
      (res.socket ?? res).once('drain', () => {
        drained();
        exchange.resume();
      });
      return false;
    },
  });
  if (attempt !== undefined) attempt.replica.inFlight += 1;
  let failOver: Error | undefined;
  try {
    await exchange.done;
    if (held === undefined) {
      if (proving) served();
      res.end();
    } else if (attempt === undefined || (failOver = heldRefusal(attempt, held, failureContext(ctx))) === undefined) {
      const { status, headers, body, code } = held.answer();
      ctx.metrics.forwarded(status);
      ctx.accessLog.errorAnswered(res, code);
      res.writeHead(status, headers).end(body);
    }
  } catch (error) {
    // After the status line there is nothing to send but a cut answer.
    if (answered && held === undefined) {
      if (attempt !== undefined && !request.signal.aborted && brokeOffByReplica(error, bodyStarted)) attempt.replicas.failed(attempt.replica, error, attempt.startedAt);
      return void res.destroy();
    }
    // The client's leaving or the shutdown, each the reason it aborted with.
    const failure = request.signal.aborted ? request.signal.reason : error;
    // An error answer that broke before its end (cut, or stalled past the idle limit): nothing of it
    // went out. With another replica to try, that replica failed the request itself (it rests) and
    // the next is tried, as if it had refused the connection; else the failure is the answer. Not
    // when totalMs ran out: the request's own budget, with none of it left for another replica.
    if (answered && attempt !== undefined && !attempt.last && !request.signal.aborted && !(failure instanceof UpstreamTotalTimeoutError)) {
      attempt.replicas.failed(attempt.replica, failure, attempt.startedAt);
      throw new UpstreamConnectionError(`the replica's HTTP ${held?.status} answer broke off before its end: ${thrownMessage(failure)}`, { cause: failure });
    }
    if (answered) {
      countForwardFailure(ctx.metrics, failure);
      throw failure;
    }
    const kind = classifyReplicaFailure(failure);
    if (attempt !== undefined && kind === 'rest') attempt.replicas.failed(attempt.replica, failure, attempt.startedAt);
    if (attempt === undefined || attempt.last || kind === 'final') countForwardFailure(ctx.metrics, failure);
    throw failure;
  } finally {
    if (attempt !== undefined) attempt.replica.inFlight -= 1;
  }
  // Dropped unseen (nothing of it went out): the caller tries the next replica.
  if (failOver !== undefined) throw failOver;
}

/** A 404 model_not_found is the replica's when the gateway names the model (`upstream.model`), the client's otherwise. */
function failureContext(ctx: ForwardRouteContext): { modelNamedByGateway: boolean } {
  return { modelNamedByGateway: ctx.config.upstream.model !== undefined };
}

/** A forwarded request the gateway answered itself (a refusal, or no answer from the upstream), counted by the status and code its client gets. */
export function countForwardFailure(metrics: GatewayMetrics, error: unknown): void {
  const { status, body } = toErrorResponse(error);
  metrics.forwarded(status, body.error.code);
}

/** The client went away, or the shutdown cut what still runs: the upstream request goes too. */
function abortOnClose(res: ServerResponse, shutdown: AbortSignal): AbortController {
  const controller = new AbortController();
  const cut = () => controller.abort(shutdown.reason);
  shutdown.addEventListener('abort', cut, { once: true });
  res.once('close', () => {
    shutdown.removeEventListener('abort', cut);
    if (!res.writableEnded) controller.abort(bodyRefusal(res.req) ?? new ClientAbortedError());
  });
  return controller;
}

const connections = new WeakMap<GatewayConfig, Map<string, ForwardConnection>>();

/** Each upstream's connection options, checked on its first forwarded request, per gateway. */
function connectionTo(ctx: ForwardRouteContext, baseUrl: string): ForwardConnection {
  let mine = connections.get(ctx.config);
  if (mine === undefined) connections.set(ctx.config, (mine = new Map()));
  let connection = mine.get(baseUrl);
  if (connection === undefined) {
    const { apiKey, timeouts } = ctx.config.upstream;
    mine.set(baseUrl, (connection = forwardConnection({ baseUrl, apiKey, timeouts })));
  }
  return connection;
}
