import { z } from 'zod';

/**
 * How the tools behave in a benchmark, beside the simulator's decode profile. `local` is this
 * machine as it is: the Python fork server with warm imports, a local FTS5 index answering in
 * milliseconds. Real deployments have slower tools (a kernel per call, a web search API), and
 * partial execution can only hide tool time that exists, so the paper's setting is a profile too.
 */
export const toolProfileSchema = z.object({
  name: z.string(),
  description: z.string(),
  source: z.string(),
  /** The python tool needs this long after its call opens before it can run a statement (a kernel start). */
  python: z.object({ startupMs: z.number().min(0) }).default({ startupMs: 0 }),
  /** Searches go over HTTP to a search API stand-in answering after latencyMs, `concurrency` at a time; absent: the local index in-process. */
  search: z.object({ latencyMs: z.number().min(0), concurrency: z.number().int().min(0) }).optional(),
});

export type ToolProfile = z.infer<typeof toolProfileSchema>;

export const TOOL_PROFILES: Record<string, ToolProfile> = {
  local: toolProfileSchema.parse({
    name: 'local',
    description: 'The tools as they run on this machine: warm Python fork server, in-process FTS5 search.',
    source: 'measured here',
  }),
  paper: toolProfileSchema.parse({
    name: 'paper',
    description:
      'The Conveyor paper\'s tool setting (Xu et al. 2024, §4): Python in a fresh Jupyter kernel per call, searches against a remote web search API that serves two requests at a time per key.',
    source:
      'Assumed, not measured here (no Jupyter, no internet on this machine): a fresh Jupyter kernel that then imports numpy and matplotlib is ' +
      'commonly ready in 1.5-3 s, and web search APIs answer in roughly 0.5-1.5 s and limit concurrent requests per key. We take 2.5 s, 1 s and 2. The paper does not publish ' +
      'per-tool times; these are round values inside those ranges, and the bench reports the g and t it measures with them.',
    python: { startupMs: 2500 },
    search: { latencyMs: 1000, concurrency: 2 },
  }),
};
