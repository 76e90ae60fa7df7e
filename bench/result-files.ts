import { accessSync, constants, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';

/**
 * Writes one benchmark run's files as `<dir>/<date>-<name><suffix>` (suffixes such as `.md`,
 * `.json`, `-sweep.svg`) and returns their paths. A second run of the same name on the same day
 * gets `<name>-2`, `-3`, …: a result that a README cites is never overwritten by the next run.
 * Each file is created exclusively (`wx`), so two runs ending at the same moment cannot both take
 * one name: the one that finds a file of its set taken removes the ones it wrote and tries the next.
 */
export function writeResultFiles(dir: string, name: string, files: Record<string, string>): string[] {
  mkdirSync(dir, { recursive: true });
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
 * Makes `dir` and checks that files can be written in it, throwing an Error whose message is one
 * line naming `--out`: called before measuring, so a bad `--out` is not found only when the files
 * are written, after minutes of measuring that it could not keep.
 */
export function checkOutDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new Error(`--out ${dir}: ${(err as Error).message}`);
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
