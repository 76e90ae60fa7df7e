import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openSqlite } from '../sqlite-driver.ts';
import { extractPageText, type PageText } from './html-page-text.ts';
import { SEARCH_INDEX_SCHEMA } from './sqlite-search-index.ts';

/** A folder of HTML pages to index. */
export interface CorpusSource {
  /** Searched recursively for `.html` / `.htm` files. */
  dir: string;
  /** Prefix of each document's URL (the page's path relative to `dir` is appended). Default: the folder's file:// URL. */
  baseUrl?: string;
  /** Pages to leave out, tested against the path relative to `dir` with "/" separators. */
  exclude?: RegExp;
}

export interface BuildSearchIndexOptions {
  /** The .sqlite file to write; replaced atomically (built beside it, then renamed). */
  out: string;
  sources: CorpusSource[];
  /** Called after each page, for a progress line. */
  onPage?: (done: number, total: number) => void;
}

export interface BuildSearchIndexReport {
  file: string;
  pages: number;
  /** Rows in the index: one per non-empty section. */
  documents: number;
  /** Characters of text indexed (bodies). */
  textChars: number;
}

/** One indexed row: a section of a page, with a `#fragment` URL when the section has an id. */
export interface SearchDocument {
  title: string;
  url: string;
  body: string;
}

/**
 * Builds an FTS5 index from HTML pages: each page is split into its sections (so a hit links to
 * the part of a long page that matched), HTML is reduced to text by `extractPageText`, and the
 * rows are title + url + body. Used by `npm run build:search-index` and by the tests (on the
 * sample pages), so both exercise the same code.
 *
 * @example
 * await buildSearchIndex({ out: 'dist/search-index/docs.sqlite', sources: [{ dir: '/usr/share/doc/python3-doc/html' }] });
 */
export async function buildSearchIndex(options: BuildSearchIndexOptions): Promise<BuildSearchIndexReport> {
  const pages: Array<{ file: string; url: string }> = [];
  for (const source of options.sources) pages.push(...(await listPages(source)));
  if (pages.length === 0) throw new Error(`no HTML pages found in ${options.sources.map((s) => s.dir).join(', ')}`);

  await mkdir(path.dirname(options.out), { recursive: true });
  // Unique per build: gateways starting together (or test workers in one process) may build at once.
  const partial = `${options.out}.${process.pid}.${randomUUID().slice(0, 8)}.partial`;
  await rm(partial, { force: true });
  const db = openSqlite(partial);
  let documents = 0;
  let textChars = 0;
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec(SEARCH_INDEX_SCHEMA);
    const insert = db.prepare<[string, string, string]>('INSERT INTO docs(title, url, body) VALUES (?, ?, ?)');
    const insertPage = db.transaction((docs: SearchDocument[]) => {
      for (const doc of docs) insert.run(doc.title, doc.url, doc.body);
    });
    for (const [i, page] of pages.entries()) {
      const docs = pageDocuments(extractPageText(await readFile(page.file, 'utf8')), page.url);
      insertPage(docs);
      documents += docs.length;
      for (const doc of docs) textChars += doc.body.length;
      options.onPage?.(i + 1, pages.length);
    }
    // Merges the FTS b-trees into one: smaller file, faster queries; the index is never written again.
    db.exec("INSERT INTO docs(docs) VALUES('optimize')");
    const meta = db.prepare<[string, string]>('INSERT INTO meta(key, value) VALUES (?, ?)');
    meta.run('sources', JSON.stringify(options.sources.map((s) => s.dir)));
    meta.run('pages', String(pages.length));
    meta.run('documents', String(documents));
    meta.run('built_at', new Date().toISOString());
    db.exec('VACUUM');
  } finally {
    db.close();
  }
  await rename(partial, options.out);
  return { file: options.out, pages: pages.length, documents, textChars };
}

/**
 * The rows for one page: one per section with more text than its heading (an `<h1>` standing
 * before the first section is no document); titles name the page too, so a hit reads on its own.
 */
export function pageDocuments(page: PageText, pageUrl: string): SearchDocument[] {
  const pageName = page.h1 || page.title;
  return page.sections.filter((section) => section.text !== section.heading).map((section) => ({
    title: section.heading === '' || section.heading === pageName ? pageName || pageUrl : `${section.heading} — ${pageName}`,
    url: section.id === undefined ? pageUrl : `${pageUrl}#${encodeURIComponent(section.id)}`,
    body: section.text,
  }));
}

async function listPages(source: CorpusSource): Promise<Array<{ file: string; url: string }>> {
  const dir = path.resolve(source.dir);
  const base = source.baseUrl ?? pathToFileURL(dir + path.sep).href;
  const names = (await readdir(dir, { recursive: true })) as string[];
  return names
    .map((name) => name.split(path.sep).join('/'))
    .filter((rel) => /\.html?$/i.test(rel) && !source.exclude?.test(rel))
    .sort()
    .map((rel) => ({ file: path.join(dir, rel), url: new URL(rel, base.endsWith('/') ? base : `${base}/`).href }));
}
