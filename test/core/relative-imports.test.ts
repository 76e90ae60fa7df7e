import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const SOURCE_DIRS = ['bench', 'bin', 'core', 'gateway', 'llm-client', 'parsers', 'plugins', 'sandbox', 'sim', 'test'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'results' ? [] : tsFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('relative imports', () => {
  // Node 22 and 24 run the .ts files themselves (type stripping, no tsx resolver): an import of
  // './x.js' that tsx maps to x.ts on Node 20 is "Cannot find module" there, and only there.
  it('name the .ts file itself, never a .js that does not exist', () => {
    const offending = SOURCE_DIRS.flatMap((dir) => tsFiles(path.join(root, dir))).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"](\.\.?\/[^'"]+\.js)['"]/g)]
        .filter((m) => !readdirSync(path.dirname(path.resolve(path.dirname(file), m[1]!))).includes(path.basename(m[1]!)))
        .map((m) => `${path.relative(root, file)}: ${m[1]}`),
    );
    expect(offending).toEqual([]);
  });
});
