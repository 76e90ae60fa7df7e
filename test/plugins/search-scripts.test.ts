import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../plugins/sqlite-driver.ts';
import { buildSearchIndex } from '../../plugins/search/search-index-builder.ts';
import { SqliteSearchIndex, queryWords } from '../../plugins/search/sqlite-search-index.ts';
import { suiteTempDir } from '../support/temp-dir.ts';

// Words of scripts whose vowel signs and viramas are combining marks (Devanagari, Tamil, Thai).
const dir = suiteTempDir('conveyor-search-scripts-');
const pagesDir = path.join(dir, 'pages');
const indexFile = path.join(dir, 'scripts.sqlite');

const page = (title: string, body: string) => `<html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body}</p></main></body></html>`;

beforeAll(async () => {
  await mkdir(pagesDir, { recursive: true });
  await writeFile(path.join(pagesDir, 'hindi.html'), page('हिन्दी', 'नमस्ते दुनिया: पहला प्रोग्राम'));
  // The fragments a split at vowel signs and viramas makes of "नमस्ते" ("नमस", "त"), as words of their own.
  await writeFile(path.join(pagesDir, 'fragments.html'), page('Fragments', 'नमस त'));
  await writeFile(path.join(pagesDir, 'tamil.html'), page('தமிழ்', 'வணக்கம் உலகம்'));
  await writeFile(path.join(pagesDir, 'latin.html'), page('Café', 'naïve résumé'));
  await buildSearchIndex({ out: indexFile, sources: [{ dir: pagesDir, baseUrl: 'https://docs.example/' }] });
});

describe('search over scripts with combining marks', () => {
  it('keeps a word with vowel signs whole, in the query and in the index', () => {
    expect(queryWords('नमस्ते दुनिया').searched).toEqual(['नमस्ते', 'दुनिया']);
    expect(queryWords('வணக்கம்').searched).toEqual(['வணக்கம்']);
  });

  it('finds the page holding the word, not the page holding its fragments', () => {
    const index = new SqliteSearchIndex(indexFile);
    try {
      expect(index.splitting).toBe('marks');
      expect(index.searchSync('नमस्ते', 5).map((h) => h.title)).toEqual(['हिन्दी']);
      expect(index.countSync('नमस्ते')).toBe(1);
      expect(index.searchSync('வணக்கம் உலகம்', 5).map((h) => h.title)).toEqual(['தமிழ்']);
      // Latin accents still fold, precomposed or combining.
      expect(index.countSync('cafe resume')).toBe(1);
      expect(index.countSync('cafe\u0301 re\u0301sume\u0301')).toBe(1);
      expect(index.countSync('nai\u0308ve')).toBe(1);
    } finally {
      index.close();
    }
  });

  it('an index built before marks were word characters keeps matching the way it was built', () => {
    const legacyFile = path.join(dir, 'legacy.sqlite');
    const db = openSqlite(legacyFile);
    db.exec(`CREATE VIRTUAL TABLE docs USING fts5(title, url UNINDEXED, body, tokenize = "porter unicode61 remove_diacritics 2 tokenchars '+#'");
      CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);`);
    db.prepare('INSERT INTO docs(title, url, body) VALUES (?, ?, ?)').run('हिन्दी', 'https://docs.example/hindi.html', 'नमस्ते दुनिया');
    db.close();
    const index = new SqliteSearchIndex(legacyFile);
    try {
      expect(index.splitting).toBe('legacy');
      expect(index.countSync('नमस्ते')).toBe(1);
      expect(index.queryWords('नमस्ते').searched).toEqual(['नमस', 'त']);
    } finally {
      index.close();
    }
  });
});
