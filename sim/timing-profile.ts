import { readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { SimConfigError } from '../core/errors.ts';

/** Folder of the shipped profiles; a bare name resolves to `<name>.json` here. */
export const PROFILES_DIR = join(dirname(fileURLToPath(import.meta.url)), 'profiles');

/** Names of the shipped profiles, for help texts. */
export function shippedProfileNames(): string[] {
  return readdirSync(PROFILES_DIR)
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -'.json'.length))
    .sort();
}

const nonNegativeMs = z.number().finite().nonnegative();

export const timingProfileSchema = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  /** Where the numbers come from: a profile without a provenance note is not accepted. */
  source: z.string().min(1),
  decode: z.object({
    baseMs: nonNegativeMs,
    perSeqMs: nonNegativeMs,
    /**
     * Per token of context the running sequences hold (prompt + tokens so far; default 0): the KV
     * cache a step reads. Measured by bench/calibrate.
     */
    perContextTokenMs: nonNegativeMs.optional(),
  }),
  prefill: z.object({
    baseMs: nonNegativeMs,
    perTokenMs: nonNegativeMs,
    /**
     * Prompt tokens a step prefills at no extra cost (default 0): below the GPU's roofline knee a
     * mixed step is bound by the weight read its decode pays anyway. Measured by bench/calibrate.
     */
    freeTokens: z.number().int().nonnegative().optional(),
    /**
     * Per prompt token prefilled × token of context before its chunk (default 0): a conversation
     * resumed after a tool result attends over the prefix the cache held, and a long prompt's later
     * chunks over the earlier ones. Measured by bench/calibrate ("resume" steps).
     */
    perTokenContextMs: nonNegativeMs.optional(),
  }),
  maxNumSeqs: z.number().int().positive(),
  /**
   * vLLM's `--max-num-batched-tokens`: the tokens one step may process, one per decoding sequence
   * plus prefill chunks (chunked prefill). Absent = no budget: a step prefills every prompt it admits whole.
   */
  maxNumBatchedTokens: z.number().int().positive().optional(),
  maxModelLen: z.number().int().positive(),
});

/** How long the simulated engine takes per step; see sim/README.md "Profiles". */
export type TimingProfile = z.infer<typeof timingProfileSchema>;

export function parseTimingProfile(value: unknown, origin = 'profile'): TimingProfile {
  const parsed = timingProfileSchema.safeParse(value);
  if (!parsed.success) {
    throw new SimConfigError(`${origin} is not a valid timing profile: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/**
 * Accepts a profile object, a shipped profile's name (`fast-test`), or a path to a JSON file
 * (anything containing a slash or ending in `.json`, relative to the working directory).
 */
export function loadTimingProfile(ref: string | TimingProfile): TimingProfile {
  if (typeof ref !== 'string') return parseTimingProfile(ref);
  const looksLikePath = ref.includes('/') || ref.includes('\\') || ref.endsWith('.json');
  const file = looksLikePath ? (isAbsolute(ref) ? ref : resolve(ref)) : join(PROFILES_DIR, `${ref}.json`);
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (cause) {
    // A mistyped name is the usual cause: say which names there are.
    const shipped = looksLikePath ? '' : `; shipped profiles: ${shippedProfileNames().join(', ')}, or give a path to a JSON file`;
    throw new SimConfigError(`timing profile "${ref}" not found (looked for ${file})${shipped}`, { cause });
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (cause) {
    throw new SimConfigError(`timing profile ${file} is not valid JSON`, { cause });
  }
  return parseTimingProfile(json, file);
}
