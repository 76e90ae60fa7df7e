import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { ClientAbortedError, ConveyorError, UpstreamResponseError } from '../core/errors.ts';
import { classifyReplicaFailure } from '../llm-client/failover-stream.ts';
import { forwardRequest } from '../llm-client/forward-request.ts';
import type { Replica } from '../llm-client/upstream-replicas.ts';
import type { GatewayConfig } from './config.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';
import { readJsonBody } from './request-body.ts';
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
 * first (up to `maxBodyBytes`). With replicas, the least loaded takes it, once: a streamed body
 * cannot be sent again, so there is no failover, but a replica that fails rests as after a chat.
 */
export async function upstreamForwardRoute(ctx: ForwardRouteContext, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const headers = forwardedHeaders(req.headers);
  let body: IncomingMessage | Buffer | null = hasBody(req) ? req : null;
  if (body !== null && ctx.config.upstream.model !== undefined && isJson(req)) {
    body = Buffer.from(JSON.stringify(withModel(await readJsonBody(req, ctx.config.maxBodyBytes), ctx.config.upstream.model)));
    headers['content-length'] = String(body.length);
  }
  const { baseUrl, apiKey, timeouts } = ctx.config.upstream;
  const replicas = ctx.upstream.pump.replicas;
  const replica = replicas?.pick(undefined, new Set());
  const controller = new AbortController();
  // The client went away (or the answer broke off): the upstream request goes too.
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  if (replica) replica.inFlight += 1;
  try {
    const query = req.url?.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
    const upstreamUrl = replica?.baseUrl ?? (baseUrl as string);
    const response = await forwardRequest(
      { baseUrl: upstreamUrl, apiKey, timeouts },
      { method: req.method ?? 'GET', endpoint: path.slice('/v1'.length), query, headers, body, signal: controller.signal },
    ).catch((error: unknown) => {
      const failure = controller.signal.aborted ? new ClientAbortedError() : error;
      ctx.metrics.forwarded(failure instanceof ConveyorError ? failure.code : 'internal_error');
      if (replica && classifyReplicaFailure(failure) === 'rest') replicas!.failed(replica, failure);
      throw failure;
    });
    ctx.metrics.forwarded(String(response.statusCode));
    if (replica) recordAnswer(ctx.upstream, replica, response.statusCode);
    res.writeHead(response.statusCode, forwardedHeaders(response.headers));
    res.flushHeaders();
    await pipeline(response.body, res).catch(() => {
      // A broken answer ends the response unfinished (the client sees a cut stream); nothing to
      // send: the status line is gone. The close handler above has cancelled the upstream.
      res.destroy();
    });
  } finally {
    if (replica) replica.inFlight -= 1;
  }
}

function recordAnswer(upstream: UpstreamTarget, replica: Replica, status: number): void {
  const replicas = upstream.pump.replicas!;
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
