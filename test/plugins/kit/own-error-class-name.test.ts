import { readFileSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { createRuntimePools, runScriptedCall, toolFromPlugin } from '../../../plugins/kit/index.ts';
import ownError from './fixtures/own-error-class-plugin.ts';

// plugins/README.md said "an error class other than `Error` is named", but the tool error names the
// thrown error's `name`, which a class of the author's own (`class QuotaExceeded extends Error {}`)
// inherits as "Error": its calls read `failed: over quota`, the class unsaid, in every runtime.
const pools = createRuntimePools({ process: { uidBase: 1_900_990_000 } });
afterAll(() => pools.close());
const moduleUrl = new URL('./fixtures/own-error-class-plugin.ts', import.meta.url);

it("an error class of the plugin's own is named only when it sets name, in every runtime, as the README says", async () => {
  for (const runtime of ['inline', 'thread', 'process'] as const) {
    const tool = toolFromPlugin({ ...ownError, runtime }, { moduleUrl, pools });
    expect((await runScriptedCall(tool, { args: { named: false } })).result?.content, runtime).toBe('error: own_error failed: over quota');
    expect((await runScriptedCall(tool, { args: { named: true } })).result?.content, runtime).toBe('error: own_error failed: QuotaExceeded: over quota');
  }
  const readme = readFileSync(new URL('../../../plugins/README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  const says = 'an error whose `name` is not `Error` is named: `failed: TypeError: …`, and a class of your own only if it sets `name`';
  expect(readme.includes(says), `plugins/README.md says: ${says}`).toBe(true);
}, 60_000);
