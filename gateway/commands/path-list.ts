import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The paths a path option's values name (`--tool-read-path`, `--sim-scenarios`). A value is one
 * path, a comma and all: a folder may be named `data,v2`, and split at every comma it was read as
 * `data` and `v2`, and the start failed on `data` (or used another folder that happened to exist).
 * The options are variadic and repeat (`--tool-read-path /a /b`), so no list syntax is needed; but
 * `/a,/b` read as two paths before, and a command line written so still works: a comma splits a
 * value only where the value names nothing on disk and the parts it splits into each do (the fewest
 * such parts). A value that names nothing either way stays whole, so the start-up error quotes it
 * as given. Relative paths count from the working directory, where the gateway resolves them.
 * Items are trimmed; empty ones dropped.
 */
export function pathList(values: readonly string[]): string[] {
  return values.flatMap((value) => existingParts(value.trim()) ?? [value.trim()]).filter((path) => path !== '');
}

/** `value` cut at commas into the fewest paths that each exist (the value itself first), or undefined where there is no such cut. */
function existingParts(value: string): string[] | undefined {
  const pieces = value.split(',');
  // best[i]: the fewest existing paths that pieces i.. join into (best[pieces.length]: none left).
  const best: Array<string[] | undefined> = [];
  best[pieces.length] = [];
  for (let i = pieces.length - 1; i >= 0; i--) {
    for (let j = pieces.length; j > i; j--) {
      const rest = best[j];
      const path = pieces.slice(i, j).join(',').trim();
      // An empty part (`/a,`, `/a,,/b`) is no path, and is dropped.
      if (rest === undefined || (best[i] !== undefined && best[i]!.length <= rest.length + 1) || (path !== '' && !existsSync(resolve(path)))) continue;
      best[i] = [path, ...rest];
    }
  }
  return best[0];
}
