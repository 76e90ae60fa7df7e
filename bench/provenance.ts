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

/** A report's provenance sentence (without its full stop): `commit 6a1db03; 2 × AMD EPYC 7B13, load average at the end 1.2 / 0.9 / 0.8`. */
export function provenanceLine(p: Provenance): string {
  return `commit ${p.commit}; ${p.cpus}, load average at the end ${p.loadavg.join(' / ')}`;
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
