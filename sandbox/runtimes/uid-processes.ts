import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../process-tree.ts';

const CLAIMS = join(tmpdir(), 'conveyor-sandbox-uids');

/**
 * Claims a free uid in [base+1, base+range) for one plugin process. Claims are lock files, so
 * that several gateways (or test workers) on one machine never share a uid: killUid of one
 * process would otherwise kill another's. A claim whose owner pid is dead is stale and reused.
 */
export function claimUid(base: number, range: number): number {
  mkdirSync(CLAIMS, { recursive: true, mode: 0o700 });
  for (let i = 1; i < range; i++) {
    const uid = base + i;
    const path = join(CLAIMS, String(uid));
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return uid;
      } catch {
        if (ownerAlive(path)) break;
        try {
          unlinkSync(path);
        } catch {
          break;
        }
      }
    }
  }
  throw new Error(`no free sandbox uid in ${base + 1}..${base + range - 1}`);
}

export function releaseUid(uid: number): void {
  try {
    unlinkSync(join(CLAIMS, String(uid)));
  } catch {
    // already released
  }
}

/** How long a claim may stay empty (its owner between its open and its write) before it is stale. */
const EMPTY_CLAIM_MS = 10_000;

function ownerAlive(path: string): boolean {
  let text: string;
  let modifiedMs: number;
  try {
    text = readFileSync(path, 'utf8');
    modifiedMs = statSync(path).mtimeMs;
  } catch {
    return true; // being written right now
  }
  // Empty: another gateway has just created it and not yet written its pid. Taken for stale, it
  // was unlinked and claimed again, and two processes shared a uid (one's killUid killed both).
  if (text === '') return Date.now() - modifiedMs < EMPTY_CLAIM_MS;
  const pid = Number(text);
  return Number.isInteger(pid) && pid > 0 && processAlive(pid);
}

/** Host pids of live processes whose real uid is `uid` (zombies excluded). */
export function pidsOfUid(uid: number): number[] {
  return pidsOfUids(new Set([uid]));
}

/** Host pids of live processes whose real uid is in `uids`, in one walk of /proc. */
export function pidsOfUids(uids: ReadonlySet<number>): number[] {
  const pids: number[] = [];
  if (uids.size === 0) return pids;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${name}/status`, 'latin1');
    } catch {
      continue;
    }
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (state !== 'Z' && real !== undefined && uids.has(Number(real))) pids.push(Number(name));
  }
  return pids;
}

/**
 * SIGKILLs every process of a uid that belongs to one plugin process alone. Where calls get their
 * own uid this is exact cleanup: it also reaches processes that double-forked out of the tree.
 * Stops them first (a fork bomb keeps forking between a scan and the kills), then kills.
 */
export function killUid(uid: number, rounds = 20): void {
  const frozen = new Set<number>();
  for (let i = 0; i < rounds; i++) {
    const found = pidsOfUid(uid).filter((pid) => !frozen.has(pid));
    if (found.length === 0) break;
    for (const pid of found) {
      frozen.add(pid);
      signal(pid, 'SIGSTOP');
    }
  }
  for (const pid of frozen) signal(pid, 'SIGKILL');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}
