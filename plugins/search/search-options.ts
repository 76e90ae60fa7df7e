import { fileURLToPath } from 'node:url';
import { HttpSearchBackend, type HttpSearchBackendOptions } from './http-search-backend.ts';
import type { SearchBackend } from './search-backend.ts';
import { openSearchIndex } from './sqlite-search-index.ts';

/** Where `npm run build:search-index` writes the Python-docs index (git-ignored `dist/`). */
export const DEFAULT_SEARCH_INDEX_FILE = fileURLToPath(new URL('../../dist/search-index/python-docs.sqlite', import.meta.url));

export type SearchPluginOptions = { maxResults?: number } & (
  | { backend: 'sqlite'; /** Default DEFAULT_SEARCH_INDEX_FILE. */ indexFile?: string }
  | ({ backend: 'http' } & HttpSearchBackendOptions)
);

/**
 * The options of the default `search` module. Runtimes load a plugin by its module URL, so the
 * URL's query configures it: `?url=<template with {query}>` selects the HTTP backend, else
 * `?index=<file>` (default DEFAULT_SEARCH_INDEX_FILE); `?maxResults=` (default 5). The variables
 * CONVEYOR_SEARCH_URL, CONVEYOR_SEARCH_INDEX and CONVEYOR_SEARCH_MAX_RESULTS fill what the query
 * leaves out.
 */
export function searchModuleOptions(moduleUrl: string, env: NodeJS.ProcessEnv = process.env): SearchPluginOptions {
  const query = new URL(moduleUrl).searchParams;
  const maxResults = Number(query.get('maxResults') ?? env['CONVEYOR_SEARCH_MAX_RESULTS']);
  const common = Number.isInteger(maxResults) && maxResults > 0 ? { maxResults } : {};
  const url = query.get('url') ?? env['CONVEYOR_SEARCH_URL'];
  if (url) return { ...common, backend: 'http', urlTemplate: url };
  return { ...common, backend: 'sqlite', indexFile: query.get('index') || env['CONVEYOR_SEARCH_INDEX'] || DEFAULT_SEARCH_INDEX_FILE };
}

/**
 * The backend for `options`, made on first use, so that importing the plugin never touches the
 * disk or network; a missing index is reported on each call (it may be built meanwhile).
 */
export function lazySearchBackend(options: SearchPluginOptions): () => SearchBackend {
  let backend: SearchBackend | undefined;
  return () => {
    if (backend) return backend;
    if (options.backend === 'http') return (backend = new HttpSearchBackend(options));
    const file = options.indexFile ?? DEFAULT_SEARCH_INDEX_FILE;
    try {
      return (backend = openSearchIndex(file));
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'SQLITE_CANTOPEN') throw new Error(`no search index at ${file}: build it with \`npm run build:search-index\``);
      throw err;
    }
  };
}
