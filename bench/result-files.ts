import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';

/**
 * Writes one benchmark run's files as `<dir>/<date>-<name><suffix>` (suffixes such as `.md`,
 * `.json`, `-sweep.svg`) and returns their paths. A second run of the same name on the same day
 * gets `<name>-2`, `-3`, …: a result that a README cites is never overwritten by the next run.
 * Each file is created exclusively (`wx`), so two runs ending at the same moment cannot both take
 * one name: the one that finds a file of its set taken removes the ones it wrote and tries the next.
 */
export function writeResultFiles(dir: string, name: string, files: Record<string, string>): string[] {
  makeDirs(dir);
  const date = new Date().toISOString().slice(0, 10);
  for (let n = 1; ; n++) {
    const stem = join(dir, n === 1 ? `${date}-${name}` : `${date}-${name}-${n}`);
    const written: string[] = [];
    try {
      for (const [suffix, text] of Object.entries(files)) {
        writeFileSync(`${stem}${suffix}`, text, { flag: 'wx' });
        written.push(`${stem}${suffix}`);
      }
      return written;
    } catch (err) {
      for (const path of written) rmSync(path, { force: true });
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** A JSON result file's text: indented, with a final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Makes `dir` and checks that files can be written in it, by writing one, throwing an Error whose
 * message is one line naming `--out`: called before measuring, so a bad `--out` is not found only
 * when the files are written, after minutes of measuring that it could not keep. A test write, not
 * access(W_OK): root passes that for a folder where nothing can be created (`/proc`, `/sys`).
 */
export function checkOutDir(dir: string): void {
  try {
    refuseFileName(dir);
    makeDirs(dir);
    const probe = join(dir, `.write-check-${process.pid}`);
    writeFileSync(probe, '', { flag: 'wx' });
    rmSync(probe, { force: true });
  } catch (err) {
    throw new Error(`--out ${dir}: ${(err as Error).message}`);
  }
}

/**
 * `--out` names the folder the files go in, never a file: bench/parsers/adversarial.ts took a file
 * name there until 2026-12-03 (its README said `--out bench/results/<date>-parsers-adversarial.md`),
 * and that command, run again, would have made a folder of that name. An existing file was refused
 * too, but as `ENOTDIR: … mkdir`, which does not say what to pass instead.
 */
function refuseFileName(dir: string): void {
  const file = /\.(md|json|svg)$/i.test(dir) || (existsSync(dir) && !statSync(dir).isDirectory());
  if (file) throw new Error("a file's name, not a folder's: --out takes the folder the files are written in, as <date>-<name>.*");
}

/**
 * The newest files of `name` written today by writeResultFiles in `dir` (`<date>-<name>`, or the
 * highest `-N` after it), as the stem their suffixes follow; undefined if there are none.
 */
export function latestResultStem(dir: string, name: string, suffix: string): string | undefined {
  const date = new Date().toISOString().slice(0, 10);
  const prefix = `${date}-${name}`;
  let best: { n: number; stem: string } | undefined;
  for (const file of existsSync(dir) ? readdirSync(dir) : []) {
    if (!file.startsWith(prefix) || !file.endsWith(suffix)) continue;
    const rest = file.slice(prefix.length, file.length - suffix.length);
    const n = rest === '' ? 1 : /^-\d+$/.test(rest) ? Number(rest.slice(1)) : NaN;
    if (Number.isFinite(n) && (best === undefined || n > best.n)) best = { n, stem: join(dir, `${prefix}${rest}`) };
  }
  return best?.stem;
}

/**
 * `mkdir -p`, one folder at a time: Node 20's `mkdirSync(dir, { recursive: true })` never returns
 * for a path under /proc (`--out /proc/x` hung the bench at 100 % CPU: mkdir there fails with
 * ENOENT though the parent exists, and Node retries the parent for ever).
 */
export function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    try {
      if (!statSync(at).isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), { code: 'ENOTDIR' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(at) === at) throw err;
      missing.unshift(at);
    }
  }
  for (const at of missing) {
    try {
      mkdirSync(at);
    } catch (err) {
      // Made meanwhile by another run: fine if it is a folder.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(at).isDirectory()) throw err;
    }
  }
}

/** checkOutDir for a standalone bench script: a bad `--out` is its one-line usage error, status 2. */
export function checkOutOption(program: Command, dir: string): void {
  try {
    checkOutDir(dir);
  } catch (err) {
    program.error(`${program.name()}: ${(err as Error).message}`, { exitCode: 2 });
  }
}
