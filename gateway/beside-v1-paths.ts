import { serverRootPath } from '../llm-client/upstream-target.ts';
import type { GatewayConfig } from './config.ts';

/**
 * Endpoints a model server keeps at its root, beside `/v1`, that the gateway forwards like the
 * other `/v1/…` ones it does not implement: vLLM's and llama.cpp server's `/tokenize` and
 * `/detokenize` (a client counts a prompt's tokens with them before it sends it). SGLang has no such
 * route and answers its own 404, rewritten into OpenAI's shape as any other.
 */
export const BESIDE_V1_PATHS: ReadonlySet<string> = new Set(['/tokenize', '/detokenize']);

/**
 * Whether the upstream's root can be found: every base URL ends in `/v1`. One that does not
 * (`http://h/api`) gives no way to tell its root from its own endpoints, and these paths are then
 * the gateway's 404, not a guess.
 */
export function besideV1Forwarding(config: GatewayConfig): boolean {
  const { baseUrl } = config.upstream;
  const urls = typeof baseUrl === 'string' ? [baseUrl] : baseUrl;
  return urls.every((url) => serverRootPath(url) !== undefined);
}
