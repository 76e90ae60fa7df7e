import type { UpstreamUsage, UsageDetails } from './upstream-parts.ts';

const count = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;

/**
 * A chunk's `usage` as the gateway reads it (prompt and completion counts, total their sum when
 * left out, and the counts inside `prompt_tokens_details` / `completion_tokens_details` when the
 * server sends them: vLLM's `cached_tokens`, a reasoning model's `reasoning_tokens`), or undefined
 * when the value is not one: the hand check of the token paths, which leave anything else to the
 * schema's parse and its worded error.
 */
export function usageCounts(value: unknown): UpstreamUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const usage = value as Record<string, unknown>;
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = usage;
  if (!count(prompt) || !count(completion) || !(total === undefined || count(total))) return undefined;
  const counts: UpstreamUsage = { prompt_tokens: prompt as number, completion_tokens: completion as number, total_tokens: (total as number | undefined) ?? (prompt as number) + (completion as number) };
  const promptDetails = detailCounts(usage.prompt_tokens_details);
  const completionDetails = detailCounts(usage.completion_tokens_details);
  if (promptDetails) counts.prompt_tokens_details = promptDetails;
  if (completionDetails) counts.completion_tokens_details = completionDetails;
  return counts;
}

/** The counts of a details object (vLLM sends null when it does not count them); other fields are dropped. */
function detailCounts(value: unknown): UsageDetails | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const counts = Object.entries(value).filter(([, v]) => count(v));
  return counts.length === 0 ? undefined : (Object.fromEntries(counts) as UsageDetails);
}

/** No tokens: where a sum of usages starts. */
export const NO_USAGE: UpstreamUsage = Object.freeze({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

/** Two usages added up, details too (a detail only one of them has counts as reported by it alone). */
export function sumUsage(a: UpstreamUsage, b: UpstreamUsage): UpstreamUsage {
  const sum: UpstreamUsage = { prompt_tokens: a.prompt_tokens + b.prompt_tokens, completion_tokens: a.completion_tokens + b.completion_tokens, total_tokens: a.total_tokens + b.total_tokens };
  const promptDetails = sumDetails(a.prompt_tokens_details, b.prompt_tokens_details);
  const completionDetails = sumDetails(a.completion_tokens_details, b.completion_tokens_details);
  if (promptDetails) sum.prompt_tokens_details = promptDetails;
  if (completionDetails) sum.completion_tokens_details = completionDetails;
  return sum;
}

function sumDetails(a: UsageDetails | undefined, b: UsageDetails | undefined): UsageDetails | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  const sum: UsageDetails = { ...a };
  for (const [name, value] of Object.entries(b)) sum[name] = (sum[name] ?? 0) + value;
  return sum;
}
