import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

// plugins/README.md "Hooks" quotes location-check-plugin.ts's onPiece, but its reject reason and
// its check had drifted from the file (`reject('location must look like "City, ST"')`, while the
// example, and its tests, answer `…, got "Paris"`): an author comparing the two could not tell
// which one the gateway runs. Every line of the snippet is now a line of the example.
const readme = readFileSync(new URL('../../../plugins/README.md', import.meta.url), 'utf8');
const example = readFileSync(new URL('../../../plugins/kit/examples/location-check-plugin.ts', import.meta.url), 'utf8');

it("quotes the location-check example's onPiece as the file has it", () => {
  const snippet = /```ts\n\/\/ onPiece: reject at the first bad field \(plugins\/kit\/examples\/location-check-plugin\.ts\)\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(snippet, 'the onPiece snippet of "Hooks"').toBeDefined();
  const lines = new Set(example.split('\n').map((line) => line.trim()));
  const missing = snippet!.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !lines.has(line));
  expect(missing).toEqual([]);
});
