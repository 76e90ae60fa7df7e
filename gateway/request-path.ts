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
