import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The READMEs send readers to source files, tests and result files by path, and files here are
// split and renamed often (STYLE: one concept per file, ~300 lines). bench/parsers/README.md named
// `formats/event-list.ts`, which is not under bench/parsers/, and parsers/README.md a file by a
// name that lives one folder down. Every path a doc names must be found from the repository's
// root or from the doc's own folder.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = [
  'README.md',
  'bench/README.md',
  'bench/overhead/README.md',
  'bench/parsers/README.md',
  'parsers/README.md',
  'plugins/README.md',
  'plugins/python/README.md',
  'sim/README.md',
];

// Paths that are the reader's, not the repository's: the walkthrough's own folder, a config's data
// folder, what a build writes, and the machine's.
const NOT_OURS = /^(my-tools\/|data\/|dist\/|\/|\.\.\/shared\/|DIR\/|A\.json|B\.json)/;

/** `a{,-2,-3}.md` → a.md, a-2.md, a-3.md (the docs name result series so). */
function expand(path: string): string[] {
  const brace = /\{([^{}]*)\}/.exec(path);
  if (!brace) return [path];
  return brace[1]!.split(',').flatMap((part) => expand(path.slice(0, brace.index) + part + path.slice(brace.index + brace[0].length)));
}

/** Backticked or linked paths with a folder and a file extension, e.g. `gateway/config.ts`, `](overhead/README.md)`. */
function pathsIn(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/`([\w.{},@-]+(?:\/[\w.{},@-]+)+\.(?:ts|mts|mjs|js|json|md|py|svg|png|html|css|sqlite))`|\]\(([\w./-]+\.\w+)\)/g)) {
    const path = (m[1] ?? m[2])!;
    if (!NOT_OURS.test(path)) found.add(path);
  }
  return [...found];
}

describe('file paths the READMEs name', () => {
  it.each(DOCS)('%s: every one exists', (doc) => {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const paths = pathsIn(text);
    expect(paths.length).toBeGreaterThan(0);
    const missing = paths.flatMap(expand).filter((p) => !existsSync(join(ROOT, p)) && !existsSync(join(ROOT, dirname(doc), p)));
    expect(missing).toEqual([]);
  });
});
