import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { conveyorConfigFileSchema } from '../../gateway/config-file.ts';

// README's "The sections and their fields" lists the config file's `sim` and `runtimes` keys itself
// (the `gateway` and `sandbox` sections it leaves to their schema files): `sim.reasoningParser` was
// taken by the file but missing from that list, so a reader of the list could not know it existed.
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const SECTIONS = /The sections and their fields:[\s\S]*?\n\n/.exec(README)?.[0] ?? '';

type AnyObject = z.ZodObject<Record<string, z.ZodType>>;
const keysOf = (field: z.ZodType): string[] => Object.keys(((field as z.ZodOptional<AnyObject>).unwrap() as AnyObject).shape);
const top = conveyorConfigFileSchema.shape as unknown as Record<string, z.ZodType>;

describe('README.md, the config file sections and their fields', () => {
  it('has the paragraph', () => {
    expect(SECTIONS).toContain('`runtimes`');
  });

  it('names every top-level key of a config file', () => {
    for (const key of Object.keys(top)) expect(SECTIONS, key).toContain(`\`${key}\``);
  });

  it("names every key of the `sim` section", () => {
    for (const key of keysOf(top.sim!)) expect(SECTIONS, `sim.${key}`).toContain(`\`${key}\``);
  });

  it('names every pool and every key of the `runtimes` section', () => {
    const runtimes = (top.runtimes as z.ZodOptional<AnyObject>).unwrap().shape;
    for (const [pool, fields] of Object.entries(runtimes)) {
      expect(SECTIONS, pool).toContain(`\`${pool}\``);
      for (const key of keysOf(fields)) expect(SECTIONS, `runtimes.${pool}.${key}`).toContain(`\`${key}\``);
    }
  });
});
