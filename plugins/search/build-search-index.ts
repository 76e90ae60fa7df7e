import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { buildSearchIndex, type CorpusSource } from './search-index-builder.ts';
import { DEFAULT_SEARCH_INDEX_FILE } from './search-options.ts';

/** Debian's python3-doc package: the Python documentation as Sphinx HTML. */
export const PYTHON_DOCS_DIR = '/usr/share/doc/python3-doc/html';
/** The 20 "Hello, World!" pages the tests and the search benchmark index. */
export const SAMPLE_DOCS_DIR = fileURLToPath(new URL('./sample-docs/', import.meta.url));

/**
 * The python3-doc corpus: every page but Sphinx's generated lists (index A–Z, module index,
 * search page, table of contents) and its asset folders (`_static`, `_sources`, …), which are
 * link lists or copies, not prose. URLs point at docs.python.org for the same X.Y version.
 */
export function pythonDocsSource(dir = PYTHON_DOCS_DIR): CorpusSource {
  const index = readFileSync(path.join(dir, 'index.html'), 'utf8');
  const version = /<title>\s*(\d+\.\d+)/.exec(index)?.[1] ?? '3';
  return {
    dir,
    baseUrl: `https://docs.python.org/${version}/`,
    exclude: /(^|\/)_|^(genindex[^/]*|search|py-modindex|contents)\.html$/,
  };
}

export function sampleDocsSource(): CorpusSource {
  return { dir: SAMPLE_DOCS_DIR, baseUrl: 'https://docs.example/hello-world/' };
}

async function main(argv: string[]): Promise<void> {
  const program = new Command('build-search-index')
    .description(`Builds the search plugin's SQLite FTS5 index (default: the python3-doc pages in ${PYTHON_DOCS_DIR} and the sample pages).`)
    .option('--out <file>', 'index file to write', DEFAULT_SEARCH_INDEX_FILE)
    .option('--source <dir[=baseUrl]>', 'a folder of HTML pages (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--sample', 'index the sample "Hello, World!" pages (alone, unless --source or --python-docs is given too)')
    .option('--python-docs', 'index the python3-doc pages (the default when no other source is given)')
    .parse(argv);
  const opts = program.opts<{ out: string; source: string[]; sample?: boolean; pythonDocs?: boolean }>();

  const sources: CorpusSource[] = opts.source.map((spec) => {
    const [dir, baseUrl] = spec.split(/=(.*)/s) as [string, string | undefined];
    return baseUrl ? { dir, baseUrl } : { dir };
  });
  // The default corpus is the Python docs plus the hello-world pages, so the Search workload's
  // C++ and Java queries find their pages in the full index too.
  const defaults = sources.length === 0 && !opts.sample && !opts.pythonDocs;
  if (opts.sample || defaults) sources.push(sampleDocsSource());
  if (opts.pythonDocs || defaults) {
    if (!existsSync(path.join(PYTHON_DOCS_DIR, 'index.html'))) {
      throw new Error(`${PYTHON_DOCS_DIR} is missing: install it (apt-get install python3-doc), or pass --sample / --source DIR`);
    }
    sources.push(pythonDocsSource());
  }

  const started = performance.now();
  let lastShown = 0;
  const report = await buildSearchIndex({
    out: path.resolve(opts.out),
    sources,
    onPage: (done, total) => {
      if (process.stderr.isTTY && (done === total || performance.now() - lastShown > 200)) {
        lastShown = performance.now();
        process.stderr.write(`\rindexing ${done}/${total} pages`);
      }
    },
  });
  if (process.stderr.isTTY) process.stderr.write('\n');
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`${report.file}: ${report.documents} sections from ${report.pages} pages, ${(report.textChars / 1e6).toFixed(1)}M chars of text, ${seconds} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv).catch((err: unknown) => {
    console.error(`build-search-index: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
