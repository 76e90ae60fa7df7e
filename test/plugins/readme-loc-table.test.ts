import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// Regression: the table said 31 lines for format-plugin.ts after two helpers made it 40, and 144
// for plan's engine after it had grown to 149. Counted here the way the table says it counts.
const PLUGINS = new URL('../../plugins/', import.meta.url);

/** Non-blank, non-comment lines (imports included): `//` lines and `/* … *\/` blocks do not count. */
function linesOfCode(text: string): number {
  let inBlock = false;
  let count = 0;
  for (const raw of text.split('\n')) {
    let line = raw.trim();
    if (inBlock) {
      const end = line.indexOf('*/');
      if (end < 0) continue;
      inBlock = false;
      line = line.slice(end + 2).trim();
    } else if (line.startsWith('/*')) {
      const end = line.indexOf('*/');
      if (end < 0) {
        inBlock = true;
        continue;
      }
      line = line.slice(end + 2).trim();
    }
    if (line !== '' && !line.startsWith('//')) count++;
  }
  return count;
}

/** The folder's `<name>-plugin.ts` and the rest of its TypeScript files (its engine), counted. */
function counted(folder: string): { plugin: number; engine: number } {
  const files = readdirSync(new URL(folder, PLUGINS)).filter((file) => file.endsWith('.ts'));
  const count = (file: string): number => linesOfCode(readFileSync(new URL(`${folder}${file}`, PLUGINS), 'utf8'));
  const sum = (list: string[]): number => list.reduce((total, file) => total + count(file), 0);
  return { plugin: sum(files.filter((f) => f.endsWith('-plugin.ts'))), engine: sum(files.filter((f) => !f.endsWith('-plugin.ts'))) };
}

describe('plugins/README.md built-in plugins table', () => {
  it('gives each plugin and engine its current lines of code', () => {
    const readme = readFileSync(new URL('README.md', PLUGINS), 'utf8');
    const rows = readme.split('\n').filter((line) => /^\| `[a-z_]+`( \([a-z]+\))? \| `[a-z-]+\/` \|/.test(line));
    expect(rows.length).toBe(8);
    for (const row of rows) {
      const cells = row.split('|').map((cell) => cell.trim());
      const folder = /`([a-z-]+\/)`/.exec(cells[2] ?? '')?.[1] as string;
      // The engine cell may go on in words ("503 (index builder, …)", "29 here + the sandbox").
      const table = { plugin: Number(cells[6]), engine: Number(/^\d+/.exec(cells[7] ?? '')?.[0]) };
      expect(table, folder).toEqual(counted(folder));
    }
  });
});
