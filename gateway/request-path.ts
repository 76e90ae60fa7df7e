import { InvalidRequestError } from '../core/errors.ts';

/**
 * A request target's path, dot segments resolved; undefined for one no URL parser reads (`//[`,
 * `http://[/`), which node:http lets through and `new URL` throws on: thrown in the request
 * listener, that would end the process. A target that starts with `//` is a path, not a reference
 * to another host: `//v1/models` is not `/models`.
 */
export function pathOf(target: string): string | undefined {
  try {
    return (target.startsWith('/') ? new URL(`http://gateway${target}`) : new URL(target, 'http://gateway')).pathname;
  } catch {
    return undefined;
  }
}

/**
 * `path` with its percent-escapes decoded (`%2F` too), as uvicorn routes it; a bad escape is a 400.
 * So is one that decodes to a dot segment (`/v1/x/..%2F..%2Fhealth`): to the gateway the escaped
 * slash is no separator, so it is one segment below /v1, but a server or proxy that resolves dot
 * segments after decoding (nginx's `proxy_pass http://vllm/;`, Go's ServeMux) routes it outside
 * /v1 (vLLM's /metrics, /reset_prefix_cache), or past the gateway's own routes.
 */
export function decodedPath(path: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw new InvalidRequestError(`the path ${path} has a malformed percent-escape`);
  }
  // The target's own dot segments were resolved already (pathOf): any left came from an escape.
  if (decoded.split('/').some((segment) => segment === '.' || segment === '..')) {
    throw new InvalidRequestError(`the path ${path} decodes to ${decoded}, which holds a dot segment: send the path it means, without percent-encoded dots or slashes`);
  }
  return decoded;
}
