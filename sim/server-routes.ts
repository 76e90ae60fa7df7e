import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { handleChatCompletions } from './chat-completions-route.ts';
import { handleCompletions } from './completions-route.ts';
import { sendErrorFor } from './error-response.ts';
import { sendJson } from './json-response.ts';
import { PROMETHEUS_CONTENT_TYPE, renderMetrics } from './metrics-text.ts';
import { SCENARIO_MODEL_PREFIX } from './scenario-set.ts';
import type { SimContext } from './sim-context.ts';

type Handler = (ctx: SimContext, req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

const ROUTES: Record<string, Partial<Record<string, Handler>>> = {
  '/v1/chat/completions': { POST: handleChatCompletions },
  '/v1/completions': { POST: handleCompletions },
  '/v1/models': { GET: listModels },
  // vLLM answers /health with an empty 200.
  '/health': { GET: (_ctx, _req, res) => void res.writeHead(200, { 'content-length': '0' }).end() },
  '/metrics': { GET: serveMetrics },
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

/** The node:http request listener: route → handler, FastAPI's 404/405 bodies otherwise. */
export function createRequestListener(ctx: SimContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const methods = ROUTES[path];
    if (methods === undefined) {
      req.resume();
      return sendJson(res, 404, { detail: 'Not Found' });
    }
    // Starlette adds HEAD to every GET route; node:http drops the body of a HEAD response.
    const handler = methods[req.method === 'HEAD' ? 'GET' : (req.method ?? '')];
    if (handler === undefined) {
      req.resume();
      const allow = Object.keys(methods).flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
      return sendJson(res, 405, { detail: 'Method Not Allowed' }, { allow: allow.join(', ') });
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

// vLLM's ModelList; scenario aliases are listed the way vLLM lists LoRA adapters (parent = base).
function listModels(ctx: SimContext, _req: IncomingMessage, res: ServerResponse): void {
  const created = Math.floor(Date.now() / 1000);
  const base = {
    id: ctx.modelName,
    object: 'model',
    created,
    owned_by: 'vllm',
    root: ctx.modelName,
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
