import type { ServerResponse } from 'node:http';
import { InvalidRequestError, ModelNotFoundError } from '../core/errors.ts';
import { listModels } from '../llm-client/list-models.ts';
import type { GatewayConfig } from './config.ts';
import { sendJson } from './send-json.ts';

/** `GET /v1/models` (the upstream's list, or the one model the gateway names) and OpenAI's "retrieve model". */
export function modelsRoutes(config: GatewayConfig): Array<{ method: string; pattern: RegExp; handler: (req: unknown, res: ServerResponse, params: Record<string, string>) => Promise<void> }> {
  return [
    { method: 'GET', pattern: /^\/v1\/models\/?$/, handler: async (_req, res) => sendJson(res, 200, await models(config)) },
    {
      // vLLM has no such route, so it is answered from the list.
      method: 'GET',
      pattern: /^\/v1\/models\/(?<id>.+)$/,
      handler: async (_req, res, params) => {
        const id = decodeModelId(params.id ?? '');
        const model = (await models(config)).data.find((m) => m.id === id);
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

async function models(config: GatewayConfig) {
  if (config.upstream.model) {
    return { object: 'list', data: [{ id: config.upstream.model, object: 'model', created: 0, owned_by: 'conveyor' }] };
  }
  // Replicas serve the same model: all are asked at once and the first to answer speaks for
  // them, so a replica that hangs until its timeout does not hold the list up.
  const { baseUrl, apiKey, timeouts } = config.upstream;
  const urls = typeof baseUrl === 'string' ? [baseUrl] : baseUrl;
  try {
    return await Promise.any(urls.map((url) => listModels({ baseUrl: url, apiKey, timeouts })));
  } catch (err) {
    throw err instanceof AggregateError ? err.errors[0] : err;
  }
}
