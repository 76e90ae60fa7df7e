import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/**
 * A fresh folder under the OS temp dir, made now and removed with everything in it after the
 * tests of the file or `describe` block that calls this (after that block's other `afterAll`
 * hooks: vitest runs them as a stack).
 */
export function suiteTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
