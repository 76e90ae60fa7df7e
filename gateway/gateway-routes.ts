import type { IncomingMessage, ServerResponse } from 'node:http';
import { NotFoundError, UpgradeRequiredError } from '../core/errors.ts';
import type { ClientKeyId } from './client-auth.ts';
import { chatCompletionsRoute, type ChatRouteContext } from './chat-completions-route.ts';
import { healthRoutes } from './health-routes.ts';
import { modelsRoutes } from './models-routes.ts';
import { PLAYGROUND_PATHS, PLAYGROUND_PATTERN, playgroundRoute } from './playground-route.ts';
import { pathOf } from './request-path.ts';
import { sendJson } from './send-json.ts';
import type { UpstreamReadiness } from './upstream-readiness.ts';

/** Served without a client's key (see server.ts's handle). */
export const OPEN_PATHS = new Set(['/health', '/health/ready', '/metrics', ...PLAYGROUND_PATHS]);

/** The chat route, with or without a trailing slash; the 100-continue check and refusals before the route use it too. */
export const CHAT_PATH = /^\/v1\/chat\/completions\/?$/;

/** `key`: the id of the client's API key (undefined on a gateway without keys, and on the open paths). */
type Handler = (req: IncomingMessage, res: ServerResponse, params: Record<string, string>, key: ClientKeyId) => Promise<void> | void;

export interface GatewayRoute {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

/**
 * The gateway's own routes; a /v1 path none of them matches is forwarded upstream (server.ts).
 * `health`: the caller's extra facts for GET /health.
 */
export function gatewayRoutes(routeCtx: ChatRouteContext, { health, readiness }: { health: (() => Record<string, unknown>) | undefined; readiness: UpstreamReadiness }): GatewayRoute[] {
  const { config, upstream, metrics, timelines, admission, tools } = routeCtx;
  return [
    { method: 'POST', pattern: CHAT_PATH, handler: (req, res, _params, key) => chatCompletionsRoute(routeCtx, req, res, key) },
    ...modelsRoutes(config, upstream.pump.replicas),
    {
      method: 'GET',
      pattern: /^\/v1\/requests\/(?<id>[\w-]+)\/timeline$/,
      handler: (_req, res, params, key) => {
        const timeline = timelines.get(params.id ?? '', key);
        if (!timeline) throw new NotFoundError(`no timeline for request ${params.id} (only recent requests are kept)`);
        sendJson(res, 200, timeline.toJSON());
      },
    },
    {
      // The events are a WebSocket (request-events-socket.ts): a plain GET is not forwarded upstream.
      method: 'GET',
      pattern: /^\/v1\/requests\/[\w-]+\/events$/,
      handler: () => {
        throw new UpgradeRequiredError('/v1/requests/{id}/events');
      },
    },
    {
      method: 'GET',
      pattern: /^\/metrics$/,
      handler: async (_req, res) => {
        const body = await metrics.render();
        res.writeHead(200, { 'content-type': metrics.registry.contentType, 'content-length': Buffer.byteLength(body) }).end(body);
      },
    },
    ...(config.playground ? [{ method: 'GET', pattern: PLAYGROUND_PATTERN, handler: servePlayground(playgroundRoute()) }] : []),
    ...healthRoutes({ config, replicas: upstream.pump.replicas, admission, toolNames: () => [...tools.keys()], extra: health, readiness }),
  ];
}

/** The methods the routes of a path take, HEAD beside GET. */
export function allowedMethods(routes: ReadonlyArray<{ method: string }>): string[] {
  const methods = new Set(routes.map((r) => r.method));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods];
}

function servePlayground(serve: ReturnType<typeof playgroundRoute>): Handler {
  return (req, res) => serve(pathOf(req.url ?? '/') ?? '/', res);
}
