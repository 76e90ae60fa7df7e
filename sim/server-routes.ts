import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { handleChatCompletions } from './chat-completions-route.ts';
import { handleCompletions } from './completions-route.ts';
import { sendErrorFor } from './error-response.ts';
import { sendJson } from './json-response.ts';
import { PROMETHEUS_CONTENT_TYPE, renderMetrics } from './metrics-text.ts';
import { ApiKeyAuth } from './api-key-auth.ts';
import { applyCors } from './cors.ts';
import { SCENARIO_MODEL_PREFIX } from './scenario-set.ts';
import type { SimContext } from './sim-context.ts';
import { handleDetokenize, handleTokenize } from './tokenize-routes.ts';

type Handler = (ctx: SimContext, req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** What GET /version reports: the vLLM release whose API the simulator follows. */
export const SIM_VLLM_VERSION = '0.11.0';

// vLLM answers /health (and /ping, its SageMaker alias) with an empty 200.
const emptyOk: Handler = (_ctx, req, res) => {
  req.resume();
  res.writeHead(200, { 'content-length': '0' }).end();
};

const ROUTES: Record<string, Partial<Record<string, Handler>>> = {
  '/v1/chat/completions': { POST: handleChatCompletions },
  '/v1/completions': { POST: handleCompletions },
  '/v1/models': { GET: listModels },
  '/tokenize': { POST: handleTokenize },
  '/detokenize': { POST: handleDetokenize },
  '/health': { GET: emptyOk },
  '/ping': { GET: emptyOk, POST: emptyOk },
  '/version': { GET: (_ctx, _req, res) => sendJson(res, 200, { version: SIM_VLLM_VERSION }) },
  '/sim/counters': { GET: (ctx, _req, res) => sendJson(res, 200, ctx.engine.counters()) },
  // vLLM's (dev-mode) route: benchmarks empty the cache between phases.
  '/reset_prefix_cache': {
    POST: (ctx, req, res) => {
      req.resume();
      ctx.engine.resetPrefixCache();
      res.writeHead(200, { 'content-length': '0' }).end();
    },
  },
};

/**
 * The node:http request listener: auth → CORS → route → handler, FastAPI's 404/405 bodies
 * otherwise. Auth comes first because vLLM adds its auth middleware after CORSMiddleware, which
 * puts it outside: a 401 carries no CORS headers there either.
 */
export function createRequestListener(ctx: SimContext): (req: IncomingMessage, res: ServerResponse) => void {
  const auth = ctx.apiKey === undefined ? undefined : new ApiKeyAuth(ctx.apiKey);
  return (req, res) => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (auth !== undefined && !auth.admit(req, res, path)) return;
    if (applyCors(req, res)) return;
    // vLLM mounts prometheus_client's app with the regex ^/metrics(?P<path>.*)$ (api_server.py
    // mount_metrics), so every path under it and every method gets the metrics.
    if (path.startsWith('/metrics')) {
      req.resume();
      return serveMetrics(ctx, req, res);
    }
    const methods = ROUTES[path];
    if (methods === undefined) {
      req.resume();
      // Starlette's redirect_slashes: the same path with its trailing slash toggled, if that is a
      // route (for any method), answers 307 to it; clients then repeat the request there.
      const toggled = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
      if (path !== '/' && ROUTES[toggled] !== undefined) {
        const location = `http://${req.headers.host ?? 'localhost'}${toggled}${query < 0 ? '' : url.slice(query)}`;
        res.writeHead(307, { location, 'content-length': '0' }).end();
        return;
      }
      return sendJson(res, 404, { detail: 'Not Found' });
    }
    // No HEAD for a GET route: vLLM declares its routes with FastAPI's @router.get, and FastAPI's
    // APIRoute keeps exactly the methods given (Starlette's own Route would add HEAD), so a HEAD
    // probe of vLLM's /health is a 405. /metrics, a mounted app, took any method above.
    const handler = methods[req.method ?? ''];
    if (handler === undefined) {
      req.resume();
      return sendJson(res, 405, { detail: 'Method Not Allowed' }, { allow: Object.keys(methods).join(', ') });
    }
    Promise.resolve()
      .then(() => handler(ctx, req, res))
      .catch((err: unknown) => {
        if (!res.headersSent) sendErrorFor(res, err);
        else res.destroy();
      });
  };
}

function modelPermission(created: number) {
  return {
    id: `modelperm-${randomUUID().replaceAll('-', '')}`,
    object: 'model_permission',
    created,
    allow_create_engine: false,
    allow_sampling: true,
    allow_logprobs: true,
    allow_search_indices: false,
    allow_view: true,
    allow_fine_tuning: false,
    organization: '*',
    group: null,
    is_blocking: false,
  };
}

// vLLM's ModelList: the served name, with the model as loaded for `root` (serving_models' model_path);
// scenario aliases are listed the way vLLM lists LoRA adapters (parent = base).
function listModels(ctx: SimContext, _req: IncomingMessage, res: ServerResponse): void {
  const created = Math.floor(Date.now() / 1000);
  const base = {
    id: ctx.modelName,
    object: 'model',
    created,
    owned_by: 'vllm',
    root: ctx.modelPath,
    parent: null,
    max_model_len: ctx.engine.profile.maxModelLen,
    permission: [modelPermission(created)],
  };
  const aliases = ctx.scenarios.scenarios.map((s) => ({
    id: `${SCENARIO_MODEL_PREFIX}${s.name}`,
    object: 'model',
    created,
    owned_by: 'vllm',
    root: s.origin,
    parent: ctx.modelName,
    max_model_len: null,
    permission: [modelPermission(created)],
  }));
  sendJson(res, 200, { object: 'list', data: [base, ...aliases] });
}

function serveMetrics(ctx: SimContext, _req: IncomingMessage, res: ServerResponse): void {
  const body = Buffer.from(renderMetrics(ctx.engine, ctx.modelName), 'utf8');
  res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': String(body.length) });
  res.end(body);
}
