import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CellMode, CellProgress, CellResult, PythonSandbox } from '../../sandbox/python-sandbox.ts';
import type { PythonSandboxLimits } from '../../sandbox/python-sandbox-options.ts';

/** Physical lines split on '\n' only, each keeping its '\n' (the last may lack it). */
export function splitLines(source: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let nl = source.indexOf('\n'); nl >= 0; nl = source.indexOf('\n', start)) {
    lines.push(source.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < source.length) lines.push(source.slice(start));
  return lines;
}

export interface RunOptions {
  mode?: CellMode;
  filename?: string;
  limits?: Partial<PythonSandboxLimits>;
  signal?: AbortSignal;
}

/** Runs a whole script through one cell, one line per push; returns the result and progress events. */
export async function runScript(
  sandbox: PythonSandbox,
  source: string,
  options: RunOptions = {},
): Promise<{ result: CellResult; events: CellProgress[] }> {
  const events: CellProgress[] = [];
  const cell = sandbox.openCell({
    id: 'test',
    mode: options.mode ?? 'incremental',
    filename: options.filename ?? '<llm-cell>',
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    onProgress: (p) => events.push(p),
  });
  for (const line of splitLines(source)) cell.pushLine(line);
  return { result: await cell.finish(), events };
}

/** Resolves on the first progress event matching `predicate` (events seen so far included). */
export class ProgressRecorder {
  readonly events: Array<CellProgress | { type: 'marker'; label: string }> = [];
  private waiters: Array<{ predicate: (p: CellProgress) => boolean; resolve: () => void }> = [];

  readonly listener = (progress: CellProgress): void => {
    this.events.push(progress);
    this.waiters = this.waiters.filter((w) => {
      if (!w.predicate(progress)) return true;
      w.resolve();
      return false;
    });
  };

  mark(label: string): void {
    this.events.push({ type: 'marker', label });
  }

  waitFor(predicate: (p: CellProgress) => boolean): Promise<void> {
    if (this.events.some((e) => e.type !== 'marker' && predicate(e))) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ predicate, resolve }));
  }
}

/** Polls a condition without asserting on time: resolves true as soon as it holds, false after `tries`. */
export async function eventually(condition: () => boolean, tries = 200, everyMs = 10): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return condition();
}

/** Joins adjacent output events: how output is chunked depends on pipe timing, its order does not. */
export function mergeOutput<T extends { type: string }>(events: readonly T[]): T[] {
  const out: T[] = [];
  for (const event of events) {
    const last = out[out.length - 1] as (T & { text?: string }) | undefined;
    const current = event as T & { text?: string };
    if (last && last.type === 'output' && current.type === 'output') {
      out[out.length - 1] = { ...last, text: `${last.text ?? ''}${current.text ?? ''}` };
    } else {
      out.push(event);
    }
  }
  return out;
}

/** Drops traceback caret lines (`~~^^`), whose shape changes between Python versions. */
export function withoutCarets(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\s*[~^]+\s*$/.test(line))
    .join('\n');
}

/**
 * `python -u script.py 2>&1` of `source` written to `dir/name`, with the file's path shown as
 * `filename`: what the same text prints run as a script, to compare a cell's observation with.
 */
export function runAsScript(python: string, dir: string, name: string, source: string, filename: string): Promise<string> {
  const path = join(dir, name);
  writeFileSync(path, source);
  return new Promise((resolve, reject) => {
    execFile('/bin/sh', ['-c', 'exec "$0" -u "$1" 2>&1 </dev/null', python, path], { cwd: dir, env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' } }, (error, stdout) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve(stdout.split(path).join(filename));
    });
  });
}

/** Object addresses (`<function f at 0x7f…>`) differ from run to run. */
export const withoutAddresses = (text: string): string => text.replace(/0x[0-9a-f]+/g, '0x…');
