import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { ChunkedBodyWriter } from '../core/chunked-body-writer.ts';
import { ClientAbortedError, ConveyorError, UpstreamResponseError } from '../core/errors.ts';
import { classifyReplicaFailure } from '../llm-client/failover-stream.ts';
import { forwardConnection, forwardRequest, type ForwardConnection } from '../llm-client/forward-request.ts';
import type { Replica, UpstreamReplicas } from '../llm-client/upstream-replicas.ts';
import type { GatewayConfig } from './config.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';
import { readBodyBytes, readJsonBody } from './request-body.ts';
import type { UpstreamTarget } from './session.ts';

export interface ForwardRouteContext {
  config: GatewayConfig;
  upstream: UpstreamTarget;
  metrics: GatewayMetrics;
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
 * headers and body, streamed both ways (an SSE stream leaves event by event). No tool runs here.
 * A client that goes away cancels the upstream request, as on the chat route. When the gateway
 * names the model itself (`upstream.model`), a JSON body's `model` is replaced, so the body is read
 * first (up to `maxBodyBytes`); any other body is read first too when its length is known and at
 * most that, and streamed otherwise (an audio upload). With replicas, the least loaded takes it,
 * once: a streamed body cannot be sent again, so there is no failover, but a replica that fails
 * rests as after a chat.
 */
export async function upstreamForwardRoute(ctx: ForwardRouteContext, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const headers = forwardedHeaders(req.headers);
  let body: IncomingMessage | Buffer | null = hasBody(req) ? req : null;
  const length = Number(req.headers['content-length']);
  if (body !== null && ctx.config.upstream.model !== undefined && isJson(req)) {
    body = Buffer.from(JSON.stringify(withModel(await readJsonBody(req, ctx.config.maxBodyBytes), ctx.config.upstream.model)));
    headers['content-length'] = String(body.length);
  } else if (body !== null && length <= ctx.config.maxBodyBytes) {
    // A body of known, modest size goes out whole, with the request head: piped, undici writes
    // it only in later turns of the loop, on the way to the first token.
    body = await readBodyBytes(req, ctx.config.maxBodyBytes);
  }
  const replicas = ctx.upstream.pump.replicas;
  const replica = replicas?.pick(undefined, new Set());
  const controller = new AbortController();
  const writer = new ChunkedBodyWriter(res);
  let answered = false;
  const query = req.url?.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
  const exchange = forwardRequest(
    connectionTo(ctx, replica?.baseUrl ?? (ctx.config.upstream.baseUrl as string)),
    { method: req.method ?? 'GET', endpoint: path.slice('/v1'.length), query, headers, body, signal: controller.signal },
    {
      head(status, upstreamHeaders) {
        answered = true;
        ctx.metrics.forwarded(String(status));
        if (replica) recordAnswer(replicas!, replica, status);
        res.writeHead(status, forwardedHeaders(upstreamHeaders));
        res.flushHeaders();
      },
      body(chunk) {
        if (writer.write(chunk)) return true;
        // Written to the socket itself after the first chunk (ChunkedBodyWriter): its drain says when.
        (res.socket ?? res).once('drain', () => exchange.resume());
        return false;
      },
    },
  );
  // The client went away: the upstream request goes too.
  res.once('close', () => {
    if (!res.writableEnded) controller.abort();
  });
  if (replica) replica.inFlight += 1;
  try {
    await exchange.done;
    res.end();
  } catch (error) {
    // After the status line there is nothing to send but a cut answer.
    if (answered) return void res.destroy();
    const failure = controller.signal.aborted ? new ClientAbortedError() : error;
    ctx.metrics.forwarded(failure instanceof ConveyorError ? failure.code : 'internal_error');
    if (replica && classifyReplicaFailure(failure) === 'rest') replicas!.failed(replica, failure);
    throw failure;
  } finally {
    if (replica) replica.inFlight -= 1;
  }
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

function recordAnswer(replicas: UpstreamReplicas, replica: Replica, status: number): void {
  if (status === 502 || status === 503 || status === 504) replicas.failed(replica, new UpstreamResponseError(status, `upstream answered HTTP ${status}`));
  else if (status < 500) replicas.succeeded(replica);
}

function forwardedHeaders(incoming: IncomingHttpHeaders): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = value;
  }
  return headers;
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
