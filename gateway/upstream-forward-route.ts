import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { BoundedQueue } from '../core/bounded-queue.ts';
import { ChunkedBodyWriter } from '../core/chunked-body-writer.ts';
import { ClientAbortedError, UpstreamResponseError } from '../core/errors.ts';
import { classifyReplicaFailure } from '../llm-client/failover-stream.ts';
import { forwardConnection, forwardRequest, type ForwardConnection, type ForwardedRequest } from '../llm-client/forward-request.ts';
import { requestJson } from '../llm-client/request-json.ts';
import type { Replica, UpstreamReplicas } from '../llm-client/upstream-replicas.ts';
import type { GatewayConfig } from './config.ts';
import type { AccessLog } from './access-log.ts';
import { toErrorResponse } from './error-response.ts';
import { ForwardedErrorAnswer } from './forwarded-error.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';
import { admitted } from './request-admission.ts';
import { readBodyBytes, readJsonBody } from './request-body.ts';
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

// RFC 9110 §7.6.1's hop-by-hop fields, and what the gateway sets itself on each hop.
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'expect',
  // The client's key is for the gateway; the upstream gets the gateway's own (upstream.apiKey).
  'authorization',
]);

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
 * answers 502/503/504 rests and the next one is tried, as one that answers 429 is, until one answers
 * otherwise or each has been tried once; the last one's answer is passed back whatever it is. A
 * streamed body goes to one replica only.
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
    release = await admitted(ctx.admission, res, { cancel: ctx.shutdown });
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
      if (last || request.signal.aborted || classifyReplicaFailure(error) === 'final') throw error;
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
      if (attempt !== undefined) {
        const refusal = replicaRefusal(status);
        // Thrown, the answer is dropped and its connection closed; the caller tries the next replica.
        if (refusal !== undefined && !attempt.last) throw refusal;
        recordAnswer(attempt, status, refusal);
      }
      answered = true;
      const headers = answerHeaders(upstreamHeaders, res);
      if (ForwardedErrorAnswer.wanted(status, headers)) {
        // Counted when it goes out: cut before its end, the client gets the gateway's error instead.
        held = new ForwardedErrorAnswer(status, headers, request.method, `/v1${request.endpoint}`);
        return;
      }
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
  try {
    await exchange.done;
    if (held === undefined) return void res.end();
    const { headers, body, code } = held.answer();
    ctx.metrics.forwarded(held.status);
    ctx.accessLog.errorAnswered(res, code);
    res.writeHead(held.status, headers).end(body);
  } catch (error) {
    // After the status line there is nothing to send but a cut answer.
    if (answered && held === undefined) return void res.destroy();
    const failure = request.signal.aborted ? (ctx.shutdown.aborted ? ctx.shutdown.reason : new ClientAbortedError()) : error;
    // An error answer cut before its end: nothing of it went out, and the failure is answered instead.
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
 * The replica's health after an answer passed to the client (the last replica's, whatever it is):
 * an answer classifyReplicaFailure calls the replica's own (401/403, 500, 502–504) rests it; a
 * 429, or another 5xx, says nothing of it. The body is not read to tell a bare 500 from one that
 * says why, as the chat route does: a forwarded 500 rests its replica.
 */
function recordAnswer({ replicas, replica, startedAt }: ReplicaAttempt, status: number, refusal: UpstreamResponseError | undefined): void {
  if (refusal !== undefined && classifyReplicaFailure(refusal) === 'rest') replicas.failed(replica, refusal, startedAt);
  else if (status < 500 && refusal === undefined) replicas.succeeded(replica);
}

function forwardedHeaders(incoming: IncomingHttpHeaders): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = value;
  }
  return headers;
}

/**
 * The upstream's answer headers less its CORS ones: which pages may read an answer is the
 * gateway's policy (cors.ts, set on `res` before this), and vLLM allows every origin by default,
 * which would otherwise override it on every forwarded endpoint. Its `Vary` joins the gateway's
 * (`Origin`) instead of replacing it, as writeHead would: a cache must key on both.
 */
function answerHeaders(upstream: Record<string, string | string[]>, res: ServerResponse): Record<string, string | string[]> {
  const headers = forwardedHeaders(upstream);
  for (const name of Object.keys(headers)) if (name.startsWith('access-control-')) delete headers[name];
  const ours = res.getHeader('vary');
  if (ours !== undefined && headers['vary'] !== undefined) headers['vary'] = joinedVary(String(ours), [headers['vary']].flat());
  return headers;
}

/** One `Vary` from the gateway's and the upstream's, each field once (`*` alone means all). */
function joinedVary(ours: string, theirs: string[]): string {
  const fields = new Map<string, string>();
  for (const field of [ours, ...theirs].flatMap((value) => value.split(','))) {
    const name = field.trim();
    if (name !== '' && !fields.has(name.toLowerCase())) fields.set(name.toLowerCase(), name);
  }
  return fields.has('*') ? '*' : [...fields.values()].join(', ');
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined;
}

function isJson(req: IncomingMessage): boolean {
  return req.headers['content-type']?.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

function withModel(body: unknown, model: string): unknown {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...body, model } : body;
}
