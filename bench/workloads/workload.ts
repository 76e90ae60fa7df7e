export interface WorkloadEnv {
  /** Whether the sandbox's Python can import numpy and matplotlib. */
  numpy: boolean;
}

export interface Workload {
  name: string;
  description: string;
  /** The chat request sent for one run (partial_execution is set by the harness). */
  request(env: WorkloadEnv): Record<string, unknown>;
}
