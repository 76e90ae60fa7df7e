import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** File names that commonly hold credentials in a checkout (a bound folder of a plugin process). */
const SECRET_FILE = /^\.env(\..*)?$|^\.npmrc$|^\.netrc$|^\.pgpass$|\.pem$|\.key$|\.p12$|\.pfx$|^id_(rsa|dsa|ecdsa|ed25519)$/;
/** Folders not searched: installed packages (their test certificates are no one's secret), and VCS data, hidden whole. */
const NOT_SEARCHED = new Set(['node_modules', '.git']);
/** A bound tree bigger than this is searched only this far (the scan runs before a process starts). */
const MAX_ENTRIES = 50_000;
const MAX_DEPTH = 12;
/** How long one scan of a tree is reused: processes start many times a second; secrets appear rarely. */
const SCAN_TTL_MS = 10_000;

export interface HiddenPaths {
  /** Files to hide under /dev/null. */
  files: string[];
  /** `.git` folders to hide under an empty read-only tmpfs. */
  dirs: string[];
}

const scans = new Map<string, { at: number; hidden: HiddenPaths }>();

/**
 * What a read-only bind of `root` must hide: credential files at any depth (`some/dir/.env`, a
 * `server.key`), and every `.git` folder. A plugin's own code is trusted, but model-written code
 * may run inside its process (the `isolate` runtime's node:vm fallback, a plugin's own eval), and
 * a nested file was readable where only the folder's top level was masked. Symlinks are not
 * followed, nor masked: bwrap would mount over the target, which may lie outside the bind.
 */
export function hiddenUnder(root: string, now = Date.now()): HiddenPaths {
  const cached = scans.get(root);
  if (cached && now - cached.at < SCAN_TTL_MS) return cached.hidden;
  const hidden: HiddenPaths = { files: [], dirs: [] };
  const queue: Array<[string, number]> = [[root, 0]];
  let seen = 0;
  while (queue.length > 0 && seen < MAX_ENTRIES) {
    const [dir, depth] = queue.shift()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      seen += 1;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name === '.git') hidden.dirs.push(path);
        else if (!NOT_SEARCHED.has(entry.name) && depth < MAX_DEPTH) queue.push([path, depth + 1]);
      } else if (entry.isFile() && SECRET_FILE.test(entry.name)) {
        hidden.files.push(path);
      }
    }
  }
  scans.set(root, { at: now, hidden });
  return hidden;
}
