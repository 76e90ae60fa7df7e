import type { UpstreamUsage } from './upstream-parts.ts';

const count = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;

/**
 * A chunk's `usage` as the gateway reads it (prompt and completion counts, total their sum when
 * left out), or undefined when the value is not one: the hand check of the token paths, which
 * leave anything else to the schema's parse and its worded error.
 */
export function usageCounts(value: unknown): UpstreamUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = value as Record<string, unknown>;
  if (!count(prompt) || !count(completion) || !(total === undefined || count(total))) return undefined;
  return { prompt_tokens: prompt as number, completion_tokens: completion as number, total_tokens: (total as number | undefined) ?? (prompt as number) + (completion as number) };
}
