import { z } from 'zod';
import { definePlugin, reject } from '../kit/define-plugin.ts';
import { guardedConnector, isPrivateAddress, PrivateNetworkError } from './guarded-connector.ts';
import { httpGetResult } from './http-get-observation.ts';
import { httpGetModuleOptions, resolveHttpGetOptions, type HttpGetOptions } from './http-get-options.ts';
import { isTimeoutError, limitedGet, parseHttpUrl } from './limited-get.ts';
import { OriginPreconnection } from './origin-preconnection.ts';

/**
 * The `http_get` tool, side-effect-safe: when the `url` field is decoded it only opens a
 * connection to the origin (or rejects a non-http(s) URL, or a private address written as one);
 * the GET is sent once the call is whole and valid. Inline: plain I/O, and the pre-opened socket lives in ctx.state.
 *
 * @example
 * const tool = inlineTool(createHttpGetPlugin({ maxBytes: 64 * 1024, timeoutMs: 5000 }));
 */
export function createHttpGetPlugin(options: HttpGetOptions = {}) {
  const { allowPrivateNetwork, ...limits } = resolveHttpGetOptions(options);
  const connect = guardedConnector({ allowPrivateNetwork, connectTimeoutMs: limits.timeoutMs });
  return definePlugin({
    name: 'http_get',
    description: 'Fetches a web page or API URL with HTTP GET and returns its status and text (HTML reduced to text, long bodies cut).',
    parameters: z.object({ url: z.string().describe('An absolute http:// or https:// URL.') }),
    consumes: 'field',
    sideEffects: true,
    limits: { timeoutMs: limits.timeoutMs + 1_000 },
    hooks: {
      onPiece(piece, ctx) {
        if (piece.kind !== 'field' || piece.path.join('.') !== 'url' || typeof piece.value !== 'string') return;
        const url = parseHttpUrl(piece.value);
        if (typeof url === 'string') return reject(url);
        // A private IP literal is known for one already (a name is checked once it resolves, on connect).
        const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
        if (!allowPrivateNetwork && isPrivateAddress(literal)) return reject(new PrivateNetworkError(literal, literal).message);
        OriginPreconnection.open(ctx.state, url, connect);
      },
      async onEnd({ url }, ctx) {
        const pre = OriginPreconnection.take(ctx.state);
        const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(limits.timeoutMs)]);
        try {
          return httpGetResult(await limitedGet(url, { ...limits, connectorFor: OriginPreconnection.connectorFor(pre, connect), signal }), limits);
        } catch (err) {
          // undici says "The operation was aborted due to timeout": name the limit instead.
          const reason = isTimeoutError(err, signal) ? `no response within the ${limits.timeoutMs} ms time limit` : (err as Error).message;
          return { ok: false, content: `error: GET ${url} failed: ${reason}` };
        } finally {
          pre?.close();
        }
      },
      onAbort: (_reason, ctx) => OriginPreconnection.take(ctx.state)?.close(),
    },
  });
}

/** Configured by this module's URL query or the environment: see httpGetModuleOptions. */
export default createHttpGetPlugin(httpGetModuleOptions(import.meta.url));
