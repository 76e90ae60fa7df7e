/**
 * Asks each `--upstream` replica for `GET /models` before any gateway starts, so a wrong base
 * URL, a missing key or a wrong `--model` reads as one line that says what to change, rather than
 * as every workload request failing with the upstream's 404 after the set-up.
 */
import { ConveyorError, UpstreamProtocolError } from '../core/errors.ts';
import { listModels, type UpstreamModelList } from '../llm-client/list-models.ts';
import { parseUpstreamUrl } from '../llm-client/upstream-url.ts';

export interface PreflightOptions {
  /** The replicas' base URLs. */
  urls: string[];
  /** `--model`, when given. */
  model?: string;
  apiKey?: string;
  /** The longest one replica's `/models` may take. */
  timeoutMs?: number;
}

export interface PreflightResult {
  /** The model every request is sent as: `--model`, else the one the first replica lists first. */
  model: string;
  /** True when `model` was not given but taken from the listing. */
  picked: boolean;
}

/** Throws an Error whose message is the line to print; the bench exits on it. */
export async function preflightUpstream(options: PreflightOptions): Promise<PreflightResult> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const lists = await Promise.all(options.urls.map((url) => listReplica(url, options.apiKey, timeoutMs)));
  const first = lists[0]!;
  // vLLM's own `vllm bench serve` takes the first listed model when none is named; a server
  // started for a benchmark usually serves exactly one.
  const model = options.model ?? first.data[0]?.id;
  if (model === undefined) throw new Error(`--upstream ${options.urls[0]}: its /models lists no model`);
  options.urls.forEach((url, i) => {
    const ids = lists[i]!.data.map((m) => m.id);
    if (!ids.includes(model)) {
      const source = options.model === undefined ? `the model ${options.urls[0]} serves, '${model}'` : `--model '${model}'`;
      throw new Error(`--upstream ${url} does not serve ${source}: it lists ${ids.join(', ') || 'no model'}`);
    }
  });
  return { model, picked: options.model === undefined };
}

async function listReplica(url: string, apiKey: string | undefined, timeoutMs: number): Promise<UpstreamModelList> {
  try {
    return await listModels({ baseUrl: url, apiKey, timeouts: { connectMs: timeoutMs, headersMs: timeoutMs, idleMs: timeoutMs, totalMs: timeoutMs } });
  } catch (err) {
    // OpenSSL's messages end in ":\n", which read as ":;" once the bench prints them on one line.
    const message = (err instanceof Error ? err.message : String(err)).replace(/[\s:]+$/, '');
    throw new Error(`--upstream ${url}: ${message}${hint(url, err, apiKey, timeoutMs)}`);
  }
}

/** What the user most likely has to change, from the way the listing failed. */
function hint(url: string, err: unknown, apiKey: string | undefined, timeoutMs: number): string {
  const status = err instanceof UpstreamProtocolError ? err.upstreamStatus : undefined;
  if (status === 404) {
    const { pathname } = parseUpstreamUrl(url);
    return pathname.endsWith('/v1') ? '' : ' — OpenAI-compatible servers answer under /v1: give the base URL with it, e.g. http://host:8000/v1';
  }
  if (status === 401 || status === 403) {
    return apiKey === undefined ? ' — the server wants a key: set CONVEYOR_UPSTREAM_API_KEY' : ' — CONVEYOR_UPSTREAM_API_KEY is set, and the server refused it';
  }
  // The listing's own timeouts (headers, total: the same limit): the message speaks of a stream,
  // and a server that took the connection and stays silent is running, so say what else it may be.
  if (err instanceof ConveyorError && (err.code === 'upstream_headers_timeout' || err.code === 'upstream_total_timeout')) {
    return ` — it took the connection but did not answer GET /models within ${timeoutMs} ms: is it an OpenAI-compatible HTTP server, and done loading its model?`;
  }
  if (err instanceof ConveyorError && err.code === 'upstream_connection_error') {
    // What an https: URL meets at a server that speaks plain HTTP (vLLM, llama.cpp and Ollama by
    // default): that server is running, so asking whether it is would mislead.
    const code = (err.cause as { code?: unknown } | undefined)?.code;
    if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') return ' — the server answers plain HTTP there: give the URL with http://';
    return ' — is the server running and listening there?';
  }
  return '';
}
