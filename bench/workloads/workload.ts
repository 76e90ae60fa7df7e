import type { TimelineEvent } from '../../gateway/timeline.ts';

export interface WorkloadEnv {
  /** Whether the sandbox's Python can import numpy and matplotlib. */
  numpy: boolean;
  /**
   * Whether the upstream is the simulator. Only it reads a request's `scenario`; a real server
   * answers the prompt, and a strict OpenAI-compatible one refuses a field it does not know.
   */
  simulator: boolean;
}

export interface Workload {
  name: string;
  description: string;
  /** The chat request sent for one run (partial_execution is set by the harness). */
  request(env: WorkloadEnv): Record<string, unknown>;
  /**
   * Why its pairs always run one after the other, when they do: its tools share a rate-limited
   * resource (the search API stand-in, one warm process), and an on and an off request sent
   * together would queue behind each other. Named in the report.
   */
  sequentialPairs?: string;
  /** The set-ups the report describes that it runs on: the Python sandbox, the search API stand-in. */
  uses?: ReadonlyArray<'python' | 'search'>;
  /**
   * Workloads whose point is early detection (Validation): the time from request start to the
   * moment the gateway rejected the call, and the earliest it could have (the invalid field
   * decoded), read from the request's timeline. Without it the figure is end-to-end latency.
   */
  detection?: (events: readonly TimelineEvent[]) => { detectedMs: number; boundMs: number } | undefined;
}

export const SIM_MODEL = 'mistral-7b-instruct-sim';

/**
 * A one-question chat request, naming the sim scenario that answers it when the upstream is the
 * simulator. `model` is the simulator's; the gateway replaces it with a real upstream's (--model).
 */
export function scenarioRequest(env: WorkloadEnv, scenario: string, question: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: SIM_MODEL, ...(env.simulator ? { scenario } : {}), messages: [{ role: 'user', content: question }], ...extra };
}
