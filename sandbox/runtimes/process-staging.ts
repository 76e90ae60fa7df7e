import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeStagingDir } from '../stale-staging.ts';
import { claimUid, killUid, pidsOfUids, releaseUid } from './uid-processes.ts';

const UID_RANGE = 4096;
const STAGING_PREFIX = 'conveyor-plugins-';

/** What one plugin process runs as and in: its own uid (as root) and working directory. */
export interface ProcessPlace {
  uid: number | null;
  hostCwd: string;
  /** Kills what still runs under the uid, gives the uid back and removes the directory; idempotent. */
  release(): void;
}

/**
 * The uids and working directories of a pool's plugin processes. As root, process n runs as uid
 * uidBase + n, claimed across gateways (uid-processes.ts); each gets a directory of its own under
 * one staging root that others may traverse but not list.
 */
export class ProcessStaging {
  private readonly uidBase: number;
  private readonly usedUids = new Set<number>();
  private root: string | null = null;

  constructor(uidBase: number) {
    this.uidBase = uidBase;
  }

  /** A place for one process: a uid when `uidDrop`, and a fresh directory that uid owns. */
  claim(uidDrop: boolean): ProcessPlace {
    let uid: number | null = null;
    let hostCwd: string | null = null;
    let released = false;
    const release = (): void => {
      // Once: a second releaseUid could drop a lock another gateway has claimed since.
      if (released) return;
      released = true;
      if (uid !== null) {
        killUid(uid);
        this.usedUids.delete(uid);
        releaseUid(uid);
      }
      if (hostCwd !== null) rmSync(hostCwd, { recursive: true, force: true });
    };
    try {
      // Inside the try: a claimed uid that a failed mkdtemp or chown left held was never given
      // back, and each such failure took one more of the range until no process could start.
      if (uidDrop) {
        uid = claimUid(this.uidBase, UID_RANGE);
        this.usedUids.add(uid);
      }
      // Made again when a tmp cleaner removed it under a long-running gateway: else every later
      // start would fail until a restart.
      if (this.root === null || !existsSync(this.root)) this.root = makeStagingRoot();
      hostCwd = mkdtempSync(join(this.root, 'p-'));
      chmodSync(hostCwd, 0o700);
      if (uid !== null) chownSync(hostCwd, uid, uid);
      return { uid, hostCwd, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** Pids running under the uids handed out (a process that left its tree still has its uid). */
  pids(): number[] {
    return pidsOfUids(this.usedUids);
  }

  /** Removes the staging root (the pool's processes are gone). */
  remove(): void {
    if (this.root) rmSync(this.root, { recursive: true, force: true });
  }
}

function makeStagingRoot(): string {
  const root = makeStagingDir(STAGING_PREFIX);
  // Traversable, not listable: each process finds only its own directory.
  chmodSync(root, 0o711);
  mkdirSync(root, { recursive: true });
  return root;
}
