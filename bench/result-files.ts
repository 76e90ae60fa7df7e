import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes one benchmark run's files as `<dir>/<date>-<name><suffix>` (suffixes such as `.md`,
 * `.json`, `-sweep.svg`) and returns their paths. A second run of the same name on the same day
 * gets `<name>-2`, `-3`, …: a result that a README cites is never overwritten by the next run.
 */
export function writeResultFiles(dir: string, name: string, files: Record<string, string>): string[] {
  mkdirSync(dir, { recursive: true });
  const date = new Date().toISOString().slice(0, 10);
  const suffixes = Object.keys(files);
  let stem = join(dir, `${date}-${name}`);
  for (let n = 2; suffixes.some((suffix) => existsSync(`${stem}${suffix}`)); n++) stem = join(dir, `${date}-${name}-${n}`);
  return suffixes.map((suffix) => {
    writeFileSync(`${stem}${suffix}`, files[suffix]!);
    return `${stem}${suffix}`;
  });
}

/** A JSON result file's text: indented, with a final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
