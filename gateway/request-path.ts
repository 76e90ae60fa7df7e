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

/** `path` with its percent-escapes decoded (`%2F` too), as uvicorn routes it; a bad escape is a 400. */
export function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    throw new InvalidRequestError(`the path ${path} has a malformed percent-escape`);
  }
}
