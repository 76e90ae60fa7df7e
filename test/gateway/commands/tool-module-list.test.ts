import { describe, expect, it } from 'vitest';
import { toolModuleList } from '../../../gateway/commands/tool-module-list.ts';

describe('toolModuleList: the modules --tool values name', () => {
  it('splits a value at commas between modules, and takes repeated values', () => {
    expect(toolModuleList(['a.ts,b.mjs', 'c.js', ' d.mts , file:///x/e.ts'])).toEqual(['a.ts', 'b.mjs', 'c.js', 'd.mts', 'file:///x/e.ts']);
  });

  // Regression: split at every comma, `plugin.ts?names=a,b` became the module `plugin.ts?names=a` and a module `b`.
  it("keeps a comma that is not followed by a module's name with the module before it: a query's list", () => {
    expect(toolModuleList(['plugin.ts?names=a,b&mode=x,other.ts?k=1,2'])).toEqual(['plugin.ts?names=a,b&mode=x', 'other.ts?k=1,2']);
  });

  it('keeps a comma in a file name, and drops empty items', () => {
    expect(toolModuleList(['tools/v1,2/plugin.ts', ',', 'a.ts,'])).toEqual(['tools/v1,2/plugin.ts', 'a.ts']);
  });
});
