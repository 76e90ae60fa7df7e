import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { toolReadPathList } from '../../../gateway/commands/tool-read-path-list.ts';
import { CLI } from '../../support/serve-process.ts';
import { suiteTempDir } from '../../support/temp-dir.ts';

// Regression: `--tool-read-path` split each value at every comma, so a folder named `data,v2` could
// not be granted: it was read as `data` and `v2`, and the start failed on `data` (or granted another
// folder that happened to exist). A value is now one path; `/a,/b`, which read as two before, still
// does where only its parts exist.
const dir = suiteTempDir('tool-read-path-');
for (const name of ['data,v2', 'data', 'a', 'b', 'a,b']) mkdirSync(path.join(dir, name));
writeFileSync(path.join(dir, 'rows.csv'), 'x\n');
const at = (name: string) => path.join(dir, name);

describe('toolReadPathList: the paths --tool-read-path values name', () => {
  it('keeps a comma that is part of a path, and takes repeated values', () => {
    expect(toolReadPathList([at('data,v2'), ` ${at('rows.csv')} `])).toEqual([at('data,v2'), at('rows.csv')]);
  });

  it('prefers the whole value where it and its parts both exist', () => {
    expect(toolReadPathList([at('a,b')])).toEqual([at('a,b')]);
  });

  it('splits a value that names nothing into the paths its commas join, as the old form wrote them', () => {
    expect(toolReadPathList([`${at('data,v2')},${at('rows.csv')},`])).toEqual([at('data,v2'), at('rows.csv')]);
    expect(toolReadPathList([`${at('a')},,${at('b')}`])).toEqual([at('a'), at('b')]);
  });

  it('keeps a value that names nothing either way whole, for the start-up error to quote', () => {
    expect(toolReadPathList([`${at('data')},nope`, at('missing,too')])).toEqual([`${at('data')},nope`, at('missing,too')]);
  });
});

describe('conveyor serve --tool-read-path', () => {
  it('grants a folder with a comma in its name, and names the value that does not exist', async () => {
    const plugin = fileURLToPath(new URL('../../../plugins/kit/examples/word-count-plugin.ts', import.meta.url));
    const args = ['serve', '--port', '0', '--upstream', 'http://127.0.0.1:9/v1', '--tool', plugin, '--tool-read-path', at('data,v2'), at('nope')];
    const failed = await promisify(execFile)(process.execPath, [CLI, ...args], { timeout: 30_000 }).then(
      () => null,
      (err: { code: number | string; stderr: string }) => err,
    );
    // Paths are checked in order: `data,v2` is there (split at its comma, `data` is and `v2` is not).
    expect(failed?.code).toBe(1);
    expect(failed?.stderr.startsWith(`conveyor: tool module ${plugin}: read-only path ${at('nope')}: no such file or folder`), failed?.stderr).toBe(true);
  }, 40_000);
});
