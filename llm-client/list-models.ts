import { z } from 'zod';
import { UpstreamProtocolError, UpstreamResponseError, UpstreamTotalTimeoutError } from '../core/errors.ts';
import { abortReason, toUpstreamError } from './upstream-failure.ts';
import { ListModelsOptionsSchema, parseUpstreamOptions, type ListModelsOptions } from './upstream-options.ts';
import { bareStatusMessage, readUpstreamResponseError } from './upstream-response-error.ts';
import { upstreamTarget } from './upstream-target.ts';

const ModelListSchema = z.looseObject({
  object: z.string().default('list'),
  data: z.array(z.looseObject({ id: z.string().min(1), owned_by: z.string().optional(), created: z.number().optional() })),
});

/**
 * A model list is kilobytes (OpenRouter's hundreds of models with descriptions, about 2 MB); a
 * body past this is not one, and is not held in memory.
 */
export const MAX_MODEL_LIST_BYTES = 16 * 1024 * 1024;

/** The upstream's answer as it sent it (unknown fields kept), so the gateway can forward it. */
export type UpstreamModelList = z.output<typeof ModelListSchema>;
export type UpstreamModel = UpstreamModelList['data'][number];

/**
 * A 429 or 503: the upstream is there, reached with the right key, and asks to be asked later; not
 * the set-up failing. Its Retry-After is kept, which the /v1/models route passes on with a 429.
 * No base URL in the message: it reaches the client on that route (readiness names the replica).
 */
function busyError(status: number, refused: UpstreamResponseError, retryAfterHeader: string | string[] | undefined): UpstreamResponseError | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const retryAfter = (Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader) || undefined;
  const said = refused.message === bareStatusMessage(status) ? '' : `: ${refused.message}`;
  const wait = `${status === 429 ? 'rate-limited' : 'busy'}: retry later${retryAfter ? `, Retry-After: ${retryAfter}` : ''}`;
  const error = new UpstreamResponseError(status, `the upstream's /models answered HTTP ${status}${said} (${wait})`, refused.param);
  if (retryAfter) error.retryAfter = retryAfter;
  return error;
}

/**
 * GET {baseUrl}/models. Uses the connect and headers timeouts, `idleMs` between body reads and
 * `totalMs` when set; failures are the same typed errors as `streamChatCompletion`.
 */
export async function listModels(options: ListModelsOptions): Promise<UpstreamModelList> {
  const resolved = parseUpstreamOptions(ListModelsOptionsSchema, options);
  const { signal, timeouts, baseUrl } = resolved;
  if (signal?.aborted) throw abortReason(signal);
  const controller = new AbortController();
  const forwardAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', forwardAbort, { once: true });
  let expired: UpstreamTotalTimeoutError | undefined;
  const total =
    timeouts.totalMs === undefined
      ? undefined
      : setTimeout(() => controller.abort((expired = new UpstreamTotalTimeoutError(timeouts.totalMs!))), timeouts.totalMs);
  try {
    const target = upstreamTarget(resolved, '/models');
    const response = await target.dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: 'GET',
      headers: { ...target.headers, accept: 'application/json' },
      signal: controller.signal,
      headersTimeout: timeouts.headersMs,
      bodyTimeout: timeouts.idleMs,
    });
    if (response.statusCode < 200 || response.statusCode > 299) {
      const { location } = response.headers;
      const refused = await readUpstreamResponseError(response.statusCode, response.body, typeof location === 'string' ? location : undefined);
      const busy = busyError(response.statusCode, refused, response.headers['retry-after']);
      if (busy) throw busy;
      // No client's input is in this request: any other 4xx (a wrong base URL's 404, a wrong key's 401)
      // is the gateway's set-up failing, not a request the client should fix.
      if (response.statusCode >= 400 && response.statusCode < 500) {
        // An empty body's message only repeats the status.
        const said = refused.message === bareStatusMessage(response.statusCode) ? '' : `: ${refused.message}`;
        throw new UpstreamProtocolError(`upstream ${baseUrl}/models answered HTTP ${response.statusCode}${said} (check the upstream's base URL and API key)`, {
          clientMessage: `the upstream's /models answered HTTP ${response.statusCode}${said}`,
          upstreamStatus: response.statusCode,
        });
      }
      throw refused;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      if (size > MAX_MODEL_LIST_BYTES) throw new UpstreamProtocolError(`upstream /models answered more than ${MAX_MODEL_LIST_BYTES / 1024 / 1024} MiB: not a model list`);
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new UpstreamProtocolError(`upstream /models answered with something that is not JSON`);
    }
    const parsed = ModelListSchema.safeParse(json);
    if (!parsed.success) throw new UpstreamProtocolError(`upstream /models answer is malformed: ${z.prettifyError(parsed.error)}`);
    return parsed.data;
  } catch (error) {
    if (signal?.aborted) throw abortReason(signal);
    throw expired ?? toUpstreamError(error, { baseUrl, timeouts });
  } finally {
    clearTimeout(total);
    signal?.removeEventListener('abort', forwardAbort);
  }
}
