import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { BoundedQueue } from '../core/bounded-queue.ts';
import { cutByShutdown, GatewayBusyError, GatewayConfigError, InvalidRequestError, MethodNotAllowedError, NotFoundError, ShuttingDownError } from '../core/errors.ts';
import { AccessLog, silentLogger, type Logger } from './access-log.ts';
import { authenticate } from './client-auth.ts';
import { CorsPolicy } from './cors.ts';
import { hostCheck } from './host-check.ts';
import { answerExpectContinue, answerParserRefusals } from './server-connection-hooks.ts';
import { countResponseBytes } from './response-bytes.ts';
import { createChatCompletionPump } from '../llm-client/pump-chat-completion.ts';
import type { ToolPlugin } from '../plugins/plugin-types.ts';
import { allowedMethods, CHAT_PATH, gatewayRoutes, OPEN_PATHS } from './gateway-routes.ts';
import { countForwardFailure, upstreamForwardRoute } from './upstream-forward-route.ts';
import { readsJsonWhole } from './forwarded-body.ts';
import { BESIDE_V1_PATHS, besideV1Forwarding } from './beside-v1-paths.ts';
import { DEFAULT_MAX_QUEUED_REQUESTS, gatewayConfigSchema, type GatewayConfig, type GatewayConfigInput } from './config.ts';
import { GatewayMetrics } from './gateway-metrics.ts';
import { describeConfigIssues } from './config-issues.ts';
import { ModelParents } from './model-parents.ts';
import type { PythonCellLoad } from '../sandbox/python-sandbox.ts';
import { toErrorResponse } from './error-response.ts';
import { sendJson } from './send-json.ts';
import { newRequestId, OPENAI_REQUEST_ID_HEADER, REQUEST_ID_HEADER } from './request-id.ts';
import { RequestEventsSocket } from './request-events-socket.ts';
import { LINGER_MS, lingerOverUnreadBody } from './unread-body.ts';
import { decodedPath, pathOf } from './request-path.ts';
import { DroppedToolTurns } from './dropped-tool-turns.ts';
import { TimelineStore } from './timeline-store.ts';
import { UpstreamReadiness } from './upstream-readiness.ts';

export interface GatewayDeps {
  tools: ReadonlyMap<string, ToolPlugin>;
  /** Extra facts for GET /health, e.g. which sandbox protections are active. */
  health?: () => Record<string, unknown>;
  /** The Python sandbox's cells open and waiting, read on each scrape of GET /metrics. */
  pythonCells?: () => PythonCellLoad;
  /** Access lines and unexpected errors (pino); none given, nothing is logged (`conveyor serve` logs at info). */
  logger?: Logger;
}

export interface GatewayHandle {
  url: string;
  port: number;
  config: GatewayConfig;
  timelines: TimelineStore;
  /** The tools that run in the gateway, by name. */
  tools: ReadonlyMap<string, ToolPlugin>;
  /** Whether the upstream answers now (GET /health/ready). */
  readiness: UpstreamReadiness;
  server: Server;
  /**
   * Stops listening, then lets the requests in flight finish for up to `graceMs` (default 0: cut
   * at once) while any new request on an open connection is answered 503; then cuts what still
   * runs (a stream ends with a `gateway_shutting_down` error chunk and [DONE], a request not yet
   * answered gets a 503) and closes every connection and follower socket. Called again while it
   * waits, the grace ends at once.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/** How long the answers cut at the end of a shutdown get to reach their clients before the connections close. */
const CUT_FLUSH_MS = 1000;

/** The gateway's settings with their defaults filled in; a GatewayConfigError naming every mistake. */
export function parseGatewayConfig(input: GatewayConfigInput): GatewayConfig {
  const parsed = gatewayConfigSchema.safeParse(input);
  if (!parsed.success) throw new GatewayConfigError(`invalid gateway configuration: ${describeConfigIssues(parsed.error, gatewayConfigSchema)}`);
  return parsed.data;
}

/** Starts the OpenAI-compatible gateway. Pipeline per request: auth → route → handler; errors → one mapper. */
export async function startGateway(input: GatewayConfigInput, deps: GatewayDeps): Promise<GatewayHandle> {
  const config = parseGatewayConfig(input);
  const timelines = new TimelineStore();
  const accessLog = new AccessLog(deps.logger ?? silentLogger);
  // Request bodies reach the pump checked by chatRequestSchema, which is stricter than its own check.
  const upstream = {
    pump: createChatCompletionPump(config.upstream, { requestsValidated: true, onReplicaHealthChange: (event) => accessLog.replicaHealth(event) }),
    model: config.upstream.model,
    conversationAffinity: config.upstream.conversationAffinity,
    continuousUsage: config.upstream.continuousUsage,
  };
  const admission =
    config.maxConcurrentRequests === undefined
      ? undefined
      : new BoundedQueue(config.maxConcurrentRequests, config.maxQueuedRequests ?? DEFAULT_MAX_QUEUED_REQUESTS, (queue) => new GatewayBusyError(queue.capacity, queue.waiting));
  const readiness = new UpstreamReadiness(config.upstream);
  const metrics = new GatewayMetrics({ replicas: upstream.pump.replicas, pythonCells: deps.pythonCells, admission, toolNames: deps.tools.keys() });
  // Aborted (with cutByShutdown) when a shutdown's grace period runs out: what still runs then ends
  // with an error its client can read, not a connection cut mid-answer.
  const shutdown = new AbortController();
  // Every request in flight listens on it: no listener count is a leak here (0 = no limit, no warning).
  setMaxListeners(0, shutdown.signal);
  const modelParents = new ModelParents(config.upstream);
  const routeCtx = { config, upstream, metrics, accessLog, tools: deps.tools, timelines, admission, shutdown: shutdown.signal, modelParents, droppedTurns: new DroppedToolTurns() };

  const routes = gatewayRoutes(routeCtx, { health: deps.health, readiness });

  // Requests being answered, for a graceful shutdown; `wake` ends a shutdown's wait (the last one
  // answered, or a second close).
  let active = 0;
  let draining = false;
  let wake: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  const server = createServer(serverOptions(config), (req, res) => {
    const started = performance.now();
    const method = req.method ?? '?';
    const path = pathOf(req.url ?? '/');
    let errorCode: string | undefined;
    active += 1;
    res.once('close', () => {
      active -= 1;
      if (active === 0) wake?.();
      accessLog.ended(method, path ?? unparsedTarget(req.url), res, performance.now() - started, errorCode);
    });
    if (draining) res.shouldKeepAlive = false;
    lingerOverUnreadBody(req, res, { maxBytes: config.maxBodyBytes, maxMs: LINGER_MS });
    handle(req, res, path).catch((err: unknown) => {
      const { status, body, headers } = toErrorResponse(err);
      errorCode = body.error.code;
      accessLog.errorSent(res, err);
      accessLog.unexpected(err, { method, path });
      if (res.headersSent) {
        res.destroy();
        return;
      }
      for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
      // A refusal before the chat route ran (no key, a wrong method, a shutdown) is one of its
      // answers too: it carries an id like the route's own (an SDK's error reports it as its
      // requestID) and is counted by its code, as the route counts its own refusals.
      if (path !== undefined && CHAT_PATH.test(path) && !res.hasHeader(REQUEST_ID_HEADER)) {
        const id = newRequestId();
        res.setHeader(REQUEST_ID_HEADER, id);
        res.setHeader(OPENAI_REQUEST_ID_HEADER, id);
        metrics.requestRefused(errorCode);
      }
      sendJson(res, status, body);
    });
  });

  server.keepAliveTimeout = config.clientTimeouts.keepAliveMs;
  if (config.maxConnections !== undefined) server.maxConnections = config.maxConnections;
  countResponseBytes(server);
  answerParserRefusals(server, accessLog);
  // The chat route reads its body whole; a forwarded route, only a JSON body it puts upstream.model in.
  answerExpectContinue(
    server,
    (path, req) => CHAT_PATH.test(path) || (forwards(path, routes.filter((r) => r.pattern.test(path))) && readsJsonWhole(config, req)),
    config.maxBodyBytes,
  );
  const besideV1 = besideV1Forwarding(config);
  /** Whether a request for `path`, which the routes `matches` take, goes to the upstream unchanged. */
  const forwards = (path: string, matches: readonly unknown[]): boolean =>
    matches.length === 0 && config.forwardOtherEndpoints && (path.startsWith('/v1/') || (besideV1 && BESIDE_V1_PATHS.has(path)));

  // Set once the server is listening: whether it checks depends on the address it bound.
  let checkHost: ReturnType<typeof hostCheck>;
  const cors = new CorsPolicy(config.allowedOrigins);
  async function handle(req: IncomingMessage, res: ServerResponse, path: string | undefined): Promise<void> {
    if (path === undefined) throw new InvalidRequestError(`the request target is not a valid path: ${req.url}`);
    checkHost?.(req);
    const matches = routes.filter((r) => r.pattern.test(path));
    const forwarded = forwards(path, matches);
    if (cors.handle(req, res, forwarded)) return;
    // After CORS: a page on an allowed origin reads this 503 as it reads any error.
    if (draining) throw new ShuttingDownError();
    if (forwarded) {
      try {
        admitForwarded(req, path);
      } catch (err) {
        // conveyor_forwarded_requests_total counts every forwarded request, refused ones too.
        countForwardFailure(metrics, err);
        throw err;
      }
      return upstreamForwardRoute(routeCtx, req, res, path);
    }
    if (matches.length === 0) {
      // A client whose base URL left out /v1 (`baseURL: "http://host:8080"`) lands here first.
      const underV1 = routes.some((r) => r.pattern.test(`/v1${path}`)) ? `: the API is under /v1 (${req.method} /v1${path})` : '';
      const notBeside = BESIDE_V1_PATHS.has(path) && config.forwardOtherEndpoints ? `: it is forwarded to the upstream's root, known only when its base URL ends in /v1` : '';
      throw new NotFoundError(`no route for ${req.method} ${path}${underV1}${notBeside}`);
    }
    // HEAD is GET without the body, which Node leaves out itself.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const route = matches.find((r) => r.method === method);
    if (!route) throw new MethodNotAllowedError(req.method ?? '?', path, allowedMethods(matches));
    // Probes and scrapers come without the clients' keys (vLLM's /health and /metrics are open
    // too); the playground page holds no secrets and asks for the key itself.
    const key = OPEN_PATHS.has(path) ? undefined : authenticate(req, config.apiKeys);
    await route.handler(req, res, route.pattern.exec(path)?.groups ?? {}, key);
  }

  /** Refuses a request for another /v1 endpoint that must not reach the upstream. */
  function admitForwarded(req: IncomingMessage, path: string): void {
    // The chat route refuses what a page may send unasked (415 for text/plain); a forwarded
    // route takes any body (multipart is /v1/audio's own), so it refuses the page instead.
    cors.refuseForeignOrigin(req);
    authenticate(req, config.apiKeys);
    // vLLM and SGLang (uvicorn) decode the path before they route it: `/v1/%63hat/completions`
    // or `/v1/chat%2Fcompletions`, forwarded as written, reached their chat route past this one.
    const decoded = decodedPath(path);
    if (routes.some((r) => r.pattern.test(decoded))) {
      throw new InvalidRequestError(`the path ${path} decodes to ${decoded}, a route of the gateway: send it without percent-encoding`);
    }
  }

  // A browser opens a WebSocket from any page without asking the server first (no preflight):
  // its Origin must be this gateway's own (the playground) or an allowed one.
  const events = new RequestEventsSocket(server, {
    timelines,
    apiKeys: config.apiKeys,
    answered: (answer) => accessLog.upgraded(answer),
    guard: (req) => {
      checkHost?.(req);
      cors.refuseForeignOrigin(req);
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, config.host, config.port)));
    server.listen(config.port, config.host, resolve);
  });
  const { port, address } = server.address() as AddressInfo;
  checkHost = hostCheck(config.host, address, config.apiKeys, config.allowedHosts);
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return {
    url: `http://${host}:${port}`,
    port,
    config,
    timelines,
    tools: deps.tools,
    readiness,
    server,
    close: ({ graceMs = 0 } = {}) => {
      if (closing) {
        // Called again while waiting (a second signal): the grace ends now.
        wake?.();
        return closing;
      }
      closing = (async () => {
        draining = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (active > 0 && graceMs > 0) await drainedWithin(graceMs);
        if (active > 0) {
          shutdown.abort(cutByShutdown());
          // The cut answers (an error chunk and [DONE], or a 503) go out before their connections close.
          await drainedWithin(CUT_FLUSH_MS);
        }
        events.close();
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };

  /** Resolves once no request is being answered, after `ms` at the latest, or when close is called again. */
  function drainedWithin(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  }
}

/** Node checks the two request timeouts on a timer (every 30 s by default): ticked often enough that a short one is kept. */
function serverOptions(config: GatewayConfig): ServerOptions {
  const { headersMs, requestMs } = config.clientTimeouts;
  return { headersTimeout: headersMs, requestTimeout: requestMs, connectionsCheckingInterval: Math.min(1000, Math.ceil(headersMs / 4)) };
}

/** Why the gateway could not listen, naming the setting to change (the system's words alone name neither). */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  const fix: Record<string, string> = {
    EADDRINUSE: `port ${port} is in use: another --port (config gateway.port), or 0 for any free one`,
    EADDRNOTAVAIL: `${host} is no address of this machine: another --host (config gateway.host)`,
    ENOTFOUND: `${host} is no address or name this machine resolves: another --host (config gateway.host)`,
    EACCES: `port ${port} needs privileges: a port above 1023 (--port, config gateway.port)`,
  };
  const hint = fix[err.code ?? ''];
  return hint === undefined ? err : new GatewayConfigError(`cannot listen on ${host}:${port}: ${hint} (${err.message})`, { cause: err });
}

/** A request target that is not a valid path, as the access line shows it: without its query, which may carry a key. */
function unparsedTarget(url: string | undefined): string {
  return url === undefined ? '?' : url.split('?')[0]!;
}
