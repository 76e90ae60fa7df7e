import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from './process-tree.ts';

const OWNER_FILE = 'owner.pid';

/**
 * A fresh staging directory `<tmpdir>/<prefix>XXXXXX`, marked with this process's pid, after the
 * stale ones of the same prefix (their owners gone) are removed.
 */
export function makeStagingDir(prefix: string): string {
  removeStaleStaging(prefix);
  const root = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(root, OWNER_FILE), `${process.pid}\n`, { mode: 0o644 });
  return root;
}

/**
 * Removes the staging directories (`<tmpdir>/<prefix>*`) of processes that are gone. A gateway
 * removes its own on close and on SIGTERM, but one killed with SIGKILL (an OOM kill, a CI job
 * cancelled) cannot, and left its scripts and its cells' files in /tmp. A directory with no owner
 * file (being made right now, or by an older version) or whose owner is alive is left alone;
 * a reused pid keeps a directory, never loses one.
 */
export function removeStaleStaging(prefix: string): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir()).filter((name) => name.startsWith(prefix));
  } catch {
    return;
  }
  for (const name of names) {
    const root = join(tmpdir(), name);
    let pid: number;
    try {
      pid = Number.parseInt(readFileSync(join(root, OWNER_FILE), 'utf8'), 10);
    } catch {
      continue;
    }
    if (!Number.isInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    try {
      rmSync(root, { recursive: true, force: true });
    } catch {
      // Files another uid wrote there that this one cannot remove: left for whoever can.
    }
  }
}
