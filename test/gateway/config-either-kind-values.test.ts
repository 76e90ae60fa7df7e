import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { configRefusals } from '../support/config-refusal.ts';
import { CLI } from '../support/serve-process.ts';

const refusal = configRefusals('conveyor-either-kind-');

// A setting that takes one of two kinds (a built-in's `false` or its settings, a module path or
// `{ module }`, one upstream URL or a list) was answered with one branch's complaint or none:
// `"http_get": true` (meant as "on") read "expected false", as if only false were allowed, and a
// number where a module or a URL goes read zod's bare "Invalid input".
describe('a value of neither kind a setting takes', () => {
  it('is named with both kinds the setting takes and the kind it got', () => {
    expect(refusal({ plugins: { http_get: true } })).toBe('plugins.http_get: expected false or object, received boolean (got true)');
    expect(refusal({ plugins: { search: 'docs.sqlite' } })).toBe('plugins.search: expected false or object, received string (got "docs.sqlite")');
    expect(refusal({ toolModules: [5] })).toBe('toolModules[0]: expected string or object, received number (got 5)');
    expect(refusal({ gateway: { upstream: { baseUrl: 5 } } })).toBe('gateway.upstream.baseUrl: expected string or array, received number (got 5)');
    // A value of one of the kinds still gets that kind's own complaint.
    expect(refusal({ plugins: { search: { indx: 'a' } } })).toBe('plugins.search.indx: unknown key (did you mean index?)');
    expect(refusal({ toolModules: [{ modul: 'a.ts' }] })).toMatch(/^toolModules\[0\]\.module: missing; toolModules\[0\]\.modul: unknown key/);
  });

  it('says so for --plugins too, status 2', async () => {
    const outcome = await promisify(execFile)(process.execPath, [CLI, 'serve', '--plugins', '{"search":true}'], { timeout: 30_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(outcome).toEqual({ code: 2, stderr: 'conveyor: option \'--plugins <json>\' argument \'{"search":true}\' is invalid. search: expected false or object, received boolean (got true)\n' });
  }, 40_000);
});
