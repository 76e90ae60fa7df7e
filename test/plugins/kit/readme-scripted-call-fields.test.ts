import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

// plugins/README.md "Testing" gives runScriptedCall's signature and what it returns; it left out
// ScriptedCall's gapMs and tenant and ScriptedRun's afterEnd (where onAbort's progress in a thread
// or a process lands), so an author reading it did not know the run had them. Every field of the
// two interfaces (plugins/kit/testing.ts) is named there.
const readme = readFileSync(new URL('../../../plugins/README.md', import.meta.url), 'utf8');
const testing = readFileSync(new URL('../../../plugins/kit/testing.ts', import.meta.url), 'utf8');

function fieldsOf(name: string): string[] {
  const body = new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`).exec(testing)?.[1] ?? '';
  return [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]!);
}

it("names every field of ScriptedCall and ScriptedRun where it gives runScriptedCall's signature", () => {
  const signature = /`runScriptedCall\(tool, \{([^}]*)\}, signal\?\)`[\s\S]*?it returns `\{([^}]*)\}`/.exec(readme);
  expect(signature, 'the signature of "Testing"').not.toBeNull();
  const named = (list: string) => list.split(',').map((f) => f.trim().replace(/\?$/, ''));
  expect(fieldsOf('ScriptedCall').length).toBeGreaterThan(3);
  expect(named(signature![1]!).sort()).toEqual(fieldsOf('ScriptedCall').sort());
  expect(named(signature![2]!).sort()).toEqual(fieldsOf('ScriptedRun').sort());
});
