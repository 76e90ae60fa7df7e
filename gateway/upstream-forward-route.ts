import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { BoundedQueue } from '../core/bounded-queue.ts';
import { ChunkedBodyWriter } from '../core/chunked-body-writer.ts';
import { ClientAbortedError, thrownMessage, UpstreamConnectionError, UpstreamResponseError } from '../core/errors.ts';
import { classifyReplicaFailure } from '../llm-client/failover-stream.ts';
import { forwardConnection, forwardRequest, type ForwardConnection, type ForwardedRequest } from '../llm-client/forward-request.ts';
import { requestJson } from '../llm-client/request-json.ts';
import type { Replica, UpstreamReplicas } from '../llm-client/upstream-replicas.ts';
import type { GatewayConfig } from './config.ts';
import type { AccessLog } from './access-log.ts';
import { toErrorResponse } from './error-response.ts';
import { ForwardedErrorAnswer } from './forwarded-error.ts';
import { answerHeaders, forwardedHeaders } from './forwarded-headers.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';
import { admitted } from './request-admission.ts';
import { readBodyBytes, readJsonBody } from './request-body.ts';
import type { UpstreamTarget } from './session.ts';
import { isJsonObject } from '../core/json-object.ts';

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
 * back whatever it is. A streamed body goes to one replica only.
 *
 * With maxConcurrentRequests each takes one of its places as a chat completion does (a
 * `/v1/completions` stream costs the gateway and the upstream what a chat stream does), waiting in
 * the same line, after its body is read and before anything goes upstream.
 */
export async function upstreamForwardRoute(ctx: ForwardRouteContext, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const headers = forwardedHeaders(req.headers);
  let body: IncomingMessage | Buffer | null = hasBody(req) ? req : null;
  const length = Number(req.headers['content-length']);
  if (body !== null && ctx.config.upstream.model !== undefined && isJson(req)) {
    body = Buffer.from(requestJson(withModel(await readJsonBody(req, ctx.config.maxBodyBytes), ctx.config.upstream.model)));
    headers['content-length'] = String(body.length);
  } else if (body !== null && length <= ctx.config.maxBodyBytes) {
    // A body of known, modest size goes out whole, with the request head: piped, undici writes
    // it only in later turns of the loop, on the way to the first token.
    body = await readBodyBytes(req, ctx.config.maxBodyBytes);
  }
  const query = req.url?.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
  const request: ForwardedRequest = { method: req.method ?? 'GET', endpoint: path.slice('/v1'.length), query, headers, body, signal: abortOnClose(res, ctx.shutdown) };
  let release: () => void;
  try {
    const inLine = performance.now();
    let waited = false;
    release = await admitted(ctx.admission, res, { waited: () => (waited = true), cancel: ctx.shutdown });
    ctx.metrics.admitted(waited ? (performance.now() - inLine) / 1000 : 0);
  } catch (error) {
    countFailure(ctx, error);
    throw error;
  }
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

interface ReplicaAttempt {
  replicas: UpstreamReplicas;
  replica: Replica;
  /** No other replica will be tried: whatever this one answers goes to the client. */
  last: boolean;
  /** On the replicas' clock (UpstreamReplicas.failed). */
  startedAt: number;
}

/**
 * One try on one upstream. Rejects before anything reached the client (so another replica may be
 * tried), or after the status line with the answer cut.
 */
async function forwardTo(ctx: ForwardRouteContext, request: ForwardedRequest, res: ServerResponse, attempt: ReplicaAttempt | undefined): Promise<void> {
  const writer = new ChunkedBodyWriter(res);
  let answered = false;
  // An error answer, read whole before any of it goes out (it may need rewriting into OpenAI's shape).
  let held: ForwardedErrorAnswer | undefined;
  const exchange = forwardRequest(connectionTo(ctx, attempt?.replica.baseUrl ?? (ctx.config.upstream.baseUrl as string)), request, {
    head(status, upstreamHeaders) {
      const headers = answerHeaders(upstreamHeaders, res);
      if (ForwardedErrorAnswer.wanted(status, headers)) {
        // Read whole first: what it says decides whether another replica is tried (heldRefusal),
        // and it is counted when it goes out (cut before its end, the client gets the gateway's error).
        held = new ForwardedErrorAnswer(status, headers, request.method, `/v1${request.endpoint}`);
        answered = true;
        return;
      }
      if (attempt !== undefined) {
        // An error answer the gateway cannot read (compressed), judged by its status alone. Thrown,
        // it is dropped and its connection closed; the caller tries the next replica.
        const refusal = replicaRefusal(status);
        if (refusal !== undefined && !attempt.last) throw refusal;
        recordAnswer(attempt, refusal === undefined ? (status < 500 ? 'final' : 'busy') : classifyReplicaFailure(refusal), refusal);
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
      if (writer.write(chunk)) return true;
      // Written to the socket itself after the first chunk (ChunkedBodyWriter): its drain says when.
      (res.socket ?? res).once('drain', () => exchange.resume());
      return false;
    },
  });
  if (attempt !== undefined) attempt.replica.inFlight += 1;
  let failOver: Error | undefined;
  try {
    await exchange.done;
    if (held === undefined) res.end();
    else if (attempt === undefined || (failOver = heldRefusal(ctx, attempt, held)) === undefined) {
      const { headers, body, code } = held.answer();
      ctx.metrics.forwarded(held.status);
      ctx.accessLog.errorAnswered(res, code);
      res.writeHead(held.status, headers).end(body);
    }
  } catch (error) {
    // After the status line there is nothing to send but a cut answer.
    if (answered && held === undefined) return void res.destroy();
    const failure = request.signal.aborted ? (ctx.shutdown.aborted ? ctx.shutdown.reason : new ClientAbortedError()) : error;
    // An error answer that broke before its end (cut, or stalled past the idle limit): nothing of it
    // went out. With another replica to try, that replica failed the request itself (it rests) and
    // the next is tried, as if it had refused the connection; else the failure is the answer.
    if (answered && attempt !== undefined && !attempt.last && !request.signal.aborted) {
      attempt.replicas.failed(attempt.replica, failure, attempt.startedAt);
      throw new UpstreamConnectionError(`the replica's HTTP ${held?.status} answer broke off before its end: ${thrownMessage(failure)}`, { cause: failure });
    }
    if (answered) {
      countFailure(ctx, failure);
      throw failure;
    }
    const kind = classifyReplicaFailure(failure);
    if (attempt !== undefined && kind === 'rest') attempt.replicas.failed(attempt.replica, failure, attempt.startedAt);
    if (attempt === undefined || attempt.last || kind === 'final') countFailure(ctx, failure);
    throw failure;
  } finally {
    if (attempt !== undefined) attempt.replica.inFlight -= 1;
  }
  // Dropped unseen (nothing of it went out): the caller tries the next replica.
  if (failOver !== undefined) throw failOver;
}

/**
 * A replica's error answer, read whole, as a chat's failover reads it (classifyReplicaFailure):
 * the error to try the next replica with (a bare 500, 401/403, 502–504, a 404 model_not_found for
 * the model the gateway names rest the replica; a 429 or a 500 that says why do not), or, for the
 * last replica and for an error that is the request's own, undefined: the answer goes to the client.
 */
function heldRefusal(ctx: ForwardRouteContext, attempt: ReplicaAttempt, held: ForwardedErrorAnswer): Error | undefined {
  const error = held.upstreamError();
  const kind = classifyReplicaFailure(error, failureContext(ctx));
  if (kind === 'final' || attempt.last) {
    recordAnswer(attempt, kind === 'final' && held.status >= 500 ? 'busy' : kind, error);
    return undefined;
  }
  if (kind === 'rest') attempt.replicas.failed(attempt.replica, error, attempt.startedAt);
  return error;
}

/** A 404 model_not_found is the replica's when the gateway names the model (`upstream.model`), the client's otherwise. */
function failureContext(ctx: ForwardRouteContext): { modelNamedByGateway: boolean } {
  return { modelNamedByGateway: ctx.config.upstream.model !== undefined };
}

/** A forwarded request the gateway answers itself (no upstream answer): its status and error code. */
function countFailure(ctx: ForwardRouteContext, error: unknown): void {
  const { status, body } = toErrorResponse(error);
  ctx.metrics.forwarded(status, body.error.code);
}

/** The client went away, or the shutdown cut what still runs: the upstream request goes too. */
function abortOnClose(res: ServerResponse, shutdown: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const cut = () => controller.abort(shutdown.reason);
  shutdown.addEventListener('abort', cut, { once: true });
  res.once('close', () => {
    shutdown.removeEventListener('abort', cut);
    if (!res.writableEnded) controller.abort();
  });
  return controller.signal;
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

/** A status another replica may not answer, as a chat's failover counts it (429, 401/403, 500, 502–504), else undefined. */
function replicaRefusal(status: number): UpstreamResponseError | undefined {
  if (status < 400) return undefined;
  const error = new UpstreamResponseError(status, `upstream answered HTTP ${status}`);
  return classifyReplicaFailure(error) === 'final' ? undefined : error;
}

/**
 * The replica's health after an answer passed to the client (the last replica's, whatever it is),
 * as classifyReplicaFailure reads it: `rest` (the replica's own failure: a bare 500, 401/403,
 * 502–504) rests it; `final` under 500 (a success, or the request's own error) counts as a
 * success; `busy` (a 429, a 500 that says why, another 5xx) says nothing of it.
 */
function recordAnswer({ replicas, replica, startedAt }: ReplicaAttempt, kind: 'rest' | 'busy' | 'final', error: Error | undefined): void {
  if (kind === 'rest') replicas.failed(replica, error, startedAt);
  else if (kind === 'final') replicas.succeeded(replica);
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined;
}

function isJson(req: IncomingMessage): boolean {
  return req.headers['content-type']?.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

function withModel(body: unknown, model: string): unknown {
  return isJsonObject(body) ? { ...body, model } : body;
}
