import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkOutDir, latestResultStem, writeResultFiles } from '../../bench/result-files.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

const dir = suiteTempDir('result-files-');

describe('writeResultFiles', () => {
  it('never overwrites an earlier run of the same name: the next one gets -2, -3, …', () => {
    const date = new Date().toISOString().slice(0, 10);
    const runs = [1, 2, 3].map((n) => writeResultFiles(dir, 'load', { '.md': `run ${n}`, '-load.svg': `<svg>${n}</svg>` }));
    expect(runs.map((files) => files.map((f) => basename(f)))).toEqual([
      [`${date}-load.md`, `${date}-load-load.svg`],
      [`${date}-load-2.md`, `${date}-load-2-load.svg`],
      [`${date}-load-3.md`, `${date}-load-3-load.svg`],
    ]);
    expect(readFileSync(runs[0]![0]!, 'utf8')).toBe('run 1');
    expect(readFileSync(runs[2]![1]!, 'utf8')).toBe('<svg>3</svg>');
    // Another name is not held up by them.
    expect(basename(writeResultFiles(dir, 'sweep', { '.md': 'x' })[0]!)).toBe(`${date}-sweep.md`);
  });

  it('takes the next name when one file of its set is taken, and leaves nothing under the taken name', () => {
    const date = new Date().toISOString().slice(0, 10);
    // Another run, ending at the same moment, has written its Markdown under the first name only.
    writeFileSync(`${dir}/${date}-race.md`, 'the other run');
    const files = writeResultFiles(dir, 'race', { '.json': '{}', '.md': 'this run' });
    expect(files.map((f) => basename(f))).toEqual([`${date}-race-2.json`, `${date}-race-2.md`]);
    expect(existsSync(`${dir}/${date}-race.json`)).toBe(false);
    expect(readFileSync(`${dir}/${date}-race.md`, 'utf8')).toBe('the other run');
  });
});

describe('latestResultStem', () => {
  // bench/parsers --update reads the day's latest results back: the highest -N, not the first name.
  it("finds today's highest -N of a name, and no other name's", () => {
    const here = `${dir}/latest`;
    mkdirSync(here);
    expect(latestResultStem(here, 'parsers', '.json')).toBeUndefined();
    const date = new Date().toISOString().slice(0, 10);
    for (let n = 0; n < 11; n++) writeResultFiles(here, 'parsers', { '.json': '{}' });
    writeResultFiles(here, 'parsers-quick', { '.json': '{}' });
    writeFileSync(`${here}/2000-01-01-parsers-99.json`, '{}');
    expect(latestResultStem(here, 'parsers', '.json')).toBe(`${here}/${date}-parsers-11`);
    expect(latestResultStem(here, 'parsers-quick', '.json')).toBe(`${here}/${date}-parsers-quick`);
    expect(latestResultStem(here, 'parsers', '.md')).toBeUndefined();
  });
});

describe('checkOutDir', () => {
  // bench/parsers/adversarial.ts took `--out <file>.md`: run again, that command would make a folder
  // of that name; an existing file was refused as `ENOTDIR: … mkdir`, which did not say what to pass.
  it.each([`${dir}/2026-11-29-parsers-adversarial.md`, `${dir}/a-file`])('refuses %s as a file, saying --out takes a folder', (out) => {
    if (out.endsWith('a-file')) writeFileSync(out, 'x');
    expect(() => checkOutDir(out)).toThrow(`--out ${out}: a file's name, not a folder's: --out takes the folder the files are written in, as <date>-<name>.*`);
    expect(existsSync(out) && !out.endsWith('a-file')).toBe(false);
  });

  it('makes a missing folder', () => {
    checkOutDir(`${dir}/made/here`);
    expect(existsSync(`${dir}/made/here`)).toBe(true);
  });
});
