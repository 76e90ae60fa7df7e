import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// STYLE.md: doc comments on every exported symbol of the plugin kit, with a runnable example.
// PluginContext, PluginRuntime, GuestError and RuntimeTool had a comment and no @example: the
// types a first plugin reaches for (ctx's fields, the runtime names) showed no use in the editor.
// Checked here for the symbols plugins/kit/index.ts re-exports from plugins/kit itself; the
// examples run in kit-doc-examples.test.ts.
const KIT = new URL('../../../plugins/kit/', import.meta.url);

function kitExports(): { name: string; file: string }[] {
  const index = readFileSync(new URL('index.ts', KIT), 'utf8');
  return [...index.matchAll(/export (?:type )?\{([^}]+)\} from '\.\/([^']+)'/g)].flatMap((m) =>
    m[1]!.split(',').map((name) => ({ name: name.trim(), file: m[2]! })).filter((e) => e.name !== ''));
}

it('every symbol the kit exports from plugins/kit has a doc comment with an @example', () => {
  const exports = kitExports();
  expect(exports.length).toBeGreaterThan(15);
  const missing = exports.filter(({ name, file }) => {
    const text = readFileSync(fileURLToPath(new URL(file, KIT)), 'utf8');
    const doc = new RegExp(`(/\\*\\*(?:(?!\\*/)[\\s\\S])*\\*/)\\s*export (?:async )?(?:function|class|interface|type|const) ${name}\\b`).exec(text);
    return !doc || !doc[1]!.includes('@example');
  });
  expect(missing.map((e) => `${e.file}: ${e.name}`)).toEqual([]);
});
