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
  python: z
    .object({
      startupMs: z.number().min(0),
      /** A fresh interpreter has nothing imported: the script pays for its own imports (no fork-server pre-imports). */
      coldImports: z.boolean().default(false),
    })
    .default({ startupMs: 0, coldImports: false }),
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
      'The Conveyor paper\'s tool setting (Xu et al. 2024, §4): Python in a fresh Jupyter kernel per call (start-up, then the script\'s own imports), ' +
      'searches against a remote web search API that also fetches the top result\'s page, two requests at a time per key.',
    source:
      'Assumed, not measured here (no Jupyter, no internet on this machine): a fresh Jupyter kernel is commonly ready in 1.5-3 s and then ' +
      'imports numpy and matplotlib cold (measured here: ~0.25 s); a web search API answers in roughly 0.5-1.5 s, fetching and extracting ' +
      'the top page adds 1-2 s, and APIs limit concurrent requests per key. We take 2.5 s, 3 s and 2. The paper does not publish per-tool ' +
      'times; these are round values inside those ranges (bench/README.md says how they were picked), and the bench reports the g and t it measures with them.',
    python: { startupMs: 2500, coldImports: true },
    search: { latencyMs: 3000, concurrency: 2 },
  }),
};
