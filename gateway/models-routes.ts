import type { ServerResponse } from 'node:http';
import { InvalidRequestError, ModelNotFoundError } from '../core/errors.ts';
import { listModels } from '../llm-client/list-models.ts';
import type { UpstreamReplicas } from '../llm-client/upstream-replicas.ts';
import type { GatewayConfig } from './config.ts';
import { sendJson } from './send-json.ts';

/**
 * `GET /v1/models` (the upstream's list, or the one model the gateway names) and OpenAI's "retrieve
 * model". `replicas`: the chat pump's replica set, whose resting replicas are not asked.
 */
export function modelsRoutes(
  config: GatewayConfig,
  replicas?: UpstreamReplicas,
): Array<{ method: string; pattern: RegExp; handler: (req: unknown, res: ServerResponse, params: Record<string, string>) => Promise<void> }> {
  return [
    { method: 'GET', pattern: /^\/v1\/models\/?$/, handler: async (_req, res) => sendJson(res, 200, await models(config, replicas, res)) },
    {
      // vLLM has no such route, so it is answered from the list.
      method: 'GET',
      pattern: /^\/v1\/models\/(?<id>.+)$/,
      handler: async (_req, res, params) => {
        const id = decodeModelId(params.id ?? '');
        const model = (await models(config, replicas, res)).data.find((m) => m.id === id);
        if (!model) throw new ModelNotFoundError(id);
        sendJson(res, 200, model);
      },
    },
  ];
}

/** A model id from the path; a malformed escape (`%E0%A4%A`) is the client's mistake, a 400, not a 500. */
function decodeModelId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new InvalidRequestError(`the model id in the path is not valid percent-encoding: ${raw}`);
  }
}

/** `res`: the client's answer; its connection closing cuts the upstream requests still open. */
async function models(config: GatewayConfig, replicas: UpstreamReplicas | undefined, res: ServerResponse) {
  if (config.upstream.model) {
    return { object: 'list', data: [{ id: config.upstream.model, object: 'model', created: 0, owned_by: 'conveyor' }] };
  }
  const { baseUrl, apiKey, timeouts } = config.upstream;
  const urls = typeof baseUrl === 'string' ? [baseUrl] : askable(baseUrl, replicas);
  // Replicas serve the same model: all are asked at once and the first to answer speaks for
  // them, so a replica that hangs until its timeout does not hold the list up. The others are
  // then cut: a client polling this route must not leave a socket per call open to a hung
  // replica, each for the whole headers timeout.
  const controller = new AbortController();
  const clientLeft = () => controller.abort();
  res.once('close', clientLeft);
  try {
    return await Promise.any(urls.map((url) => listModels({ baseUrl: url, apiKey, timeouts, signal: controller.signal })));
  } catch (err) {
    throw err instanceof AggregateError ? err.errors[0] : err;
  } finally {
    res.off('close', clientLeft);
    controller.abort();
  }
}

/** The replicas worth asking: those not resting after a failure; all of them when every one rests (the outage may be over). */
function askable(urls: readonly string[], replicas: UpstreamReplicas | undefined): readonly string[] {
  if (!replicas) return urls;
  const resting = new Set(replicas.states().filter((r) => r.state === 'resting').map((r) => r.baseUrl));
  const up = urls.filter((url) => !resting.has(url));
  return up.length > 0 ? up : urls;
}
