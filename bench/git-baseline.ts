import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Another version of the code, to time side by side with this one (`--baseline`). */
export interface Baseline {
  /** A directory laid out like this repository (at least `paths`), its imports resolving. */
  dir: string;
  /** What the reports call it: the git ref or the directory given. */
  label: string;
  /** The commit `label` names, abbreviated (a ref such as `HEAD` or `main` moves on); undefined for a directory. */
  commit?: string;
  /** Removes the directory if it was extracted for this run. */
  dispose(): void;
}

/**
 * `spec` itself if it is a directory, else the git ref `spec` with `paths` (default: the whole tree)
 * extracted to a temporary directory, node_modules linked so that its imports resolve.
 */
export function baseline(spec: string, paths: readonly string[] = []): Baseline {
  if (existsSync(spec) && statSync(spec).isDirectory()) return { dir: path.resolve(spec), label: spec, dispose: () => {} };
  // Asked first, so that a typo reads as one line (git archive's failure was a stack trace with
  // git's own complaint printed above it) and leaves no temporary directory behind.
  let commit: string;
  try {
    commit = execFileSync('git', ['rev-parse', '--verify', '--quiet', '--short', `${spec}^{commit}`], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    throw new Error(`--baseline ${spec}: neither a folder nor a commit of this repository`);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'conveyor-baseline-'));
  try {
    const archive = execFileSync('git', ['archive', commit, ...paths], { cwd: repoRoot, maxBuffer: 256 * 1024 * 1024 });
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
  return { dir, label: spec, commit, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
