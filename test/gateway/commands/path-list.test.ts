import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { pathList } from '../../../gateway/commands/path-list.ts';
import { CLI } from '../../support/serve-process.ts';
import { suiteTempDir } from '../../support/temp-dir.ts';

// Regression: `--tool-read-path` and `--sim-scenarios` split each value at every comma, so a folder
// named `data,v2` could not be given: it was read as `data` and `v2`, and the start failed on `data`
// (or used another folder that happened to exist). A value is now one path; `/a,/b`, which read as
// two before, still does where only its parts exist.
const dir = suiteTempDir('path-list-');
for (const name of ['data,v2', 'data', 'a', 'b', 'a,b']) mkdirSync(path.join(dir, name));
writeFileSync(path.join(dir, 'rows.csv'), 'x\n');
const at = (name: string) => path.join(dir, name);

describe('pathList: the paths --tool-read-path and --sim-scenarios values name', () => {
  it('keeps a comma that is part of a path, and takes repeated values', () => {
    expect(pathList([at('data,v2'), ` ${at('rows.csv')} `])).toEqual([at('data,v2'), at('rows.csv')]);
  });

  it('prefers the whole value where it and its parts both exist', () => {
    expect(pathList([at('a,b')])).toEqual([at('a,b')]);
  });

  it('splits a value that names nothing into the paths its commas join, as the old form wrote them', () => {
    expect(pathList([`${at('data,v2')},${at('rows.csv')},`])).toEqual([at('data,v2'), at('rows.csv')]);
    expect(pathList([`${at('a')},,${at('b')}`])).toEqual([at('a'), at('b')]);
  });

  it('keeps a value that names nothing either way whole, for the start-up error to quote', () => {
    expect(pathList([`${at('data')},nope`, at('missing,too')])).toEqual([`${at('data')},nope`, at('missing,too')]);
  });
});

describe('conveyor serve --tool-read-path', () => {
  it('grants a folder with a comma in its name, and names the value that does not exist', async () => {
    const plugin = fileURLToPath(new URL('../../../plugins/kit/examples/word-count-plugin.ts', import.meta.url));
    const args = ['serve', '--port', '0', '--upstream', 'http://127.0.0.1:9/v1', '--tool', plugin, '--tool-read-path', at('data,v2'), at('nope')];
    const failed = await promisify(execFile)(process.execPath, [CLI, ...args], { timeout: 90_000 }).then(
      () => null,
      (err: { code: number | string; stderr: string }) => err,
    );
    // Paths are checked in order: `data,v2` is there (split at its comma, `data` is and `v2` is not).
    expect(failed?.code).toBe(1);
    expect(failed?.stderr.startsWith(`conveyor: tool module ${plugin}: read-only path ${at('nope')}: no such file or folder`), failed?.stderr).toBe(true);
  }, 120_000);
});

describe('conveyor serve --sim-scenarios', () => {
  it('reads a value with a comma as one folder', async () => {
    // `scenarios,v2` does not exist, and split at its comma `scenarios` would not either: the
    // simulator's error names the value as given (it named `.../scenarios` before).
    const args = ['serve', '--port', '0', '--sim-scenarios', at('scenarios,v2')];
    const failed = await promisify(execFile)(process.execPath, [CLI, ...args], { timeout: 90_000 }).then(
      () => null,
      (err: { code: number | string; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toBe(`conveyor: scenario directory ${at('scenarios,v2')} does not exist\n`);
  }, 120_000);
});
