import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where a result came from, so that a number quoted later can be traced to its code and machine. */
export interface Provenance {
  /** The checkout's commit, `+ changes` when the working tree differs from it; "unknown" outside git. */
  commit: string;
  cpus: string;
  /** 1, 5 and 15 minute load averages when the run ended: a busy host makes every figure slower. */
  loadavg: number[];
}

export function provenance(): Provenance {
  return {
    commit: gitCommit(),
    cpus: cpusLine(),
    loadavg: os.loadavg().map((v) => Number(v.toFixed(2))),
  };
}

/** The machine's cores as a report names them: `2 × AMD EPYC 7B13`. */
export function cpusLine(): string {
  return `${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? '?'}`;
}

function gitCommit(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    return git('status', '--porcelain', '--untracked-files=no') === '' ? commit : `${commit} + changes`;
  } catch {
    return 'unknown';
  }
}
