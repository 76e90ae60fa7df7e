import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readConfigFile } from '../../gateway/config-file.ts';

// README's "Config file" shows a sample a reader copies into conveyor.json: it must be a file the
// gateway reads, and its `sim` section beside an upstream (where `--sim-profile` is refused) must
// be explained, or the reader believes the simulator's H100 profile times the real server.
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const sample = /\*\*Config file\.\*\*[\s\S]*?```json\n([\s\S]*?)\n```/.exec(README)?.[1] ?? '';
const folder = mkdtempSync(join(tmpdir(), 'readme-config-'));

describe('README.md, the config file sample', () => {
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('is a config file the gateway reads', () => {
    const path = join(folder, 'conveyor.json');
    writeFileSync(path, sample);
    const file = readConfigFile(path);
    expect(file.gateway?.upstream?.baseUrl).toBe('http://127.0.0.1:8000/v1');
    expect(file.sim?.profile).toBe('mistral-7b-h100');
  });

  it("names a tool module that is in the checkout's root, where the README puts the file", () => {
    const modules = (JSON.parse(sample) as { toolModules: string[] }).toolModules;
    for (const module of modules) expect(existsSync(new URL(`../../${module}`, import.meta.url)), module).toBe(true);
  });

  it('says that its `sim` section is not used beside its upstream', () => {
    expect(README).toMatch(/`sim` section is read only without an upstream/);
  });
});
