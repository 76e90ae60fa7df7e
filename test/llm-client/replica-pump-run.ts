import { type ChatCompletionPump, type ReplicaAffinity, type ReplicaState, type UpstreamPart } from '../../llm-client/index.ts';
import { MODEL } from './fixtures/vllm-streams.ts';

const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };

/**
 * One stream through a pump over replicas, to its end: the parts its consumer got, its error (or
 * undefined) and the replicas that accepted it, in order (several when it failed over after an accept).
 */
export async function runPump(pump: ChatCompletionPump, affinity?: ReplicaAffinity, signal = new AbortController().signal) {
  const parts: UpstreamPart[] = [];
  const accepted: string[] = [];
  const stream = pump({ body, signal, affinity, onAccepted: ({ baseUrl }) => accepted.push(baseUrl) }, (part) => parts.push(part));
  const error = await stream.done.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { parts, error, accepted };
}

/** What /health shows of one replica of `pump`. */
export const replicaState = (pump: ChatCompletionPump, baseUrl: string): ReplicaState => pump.replicas!.states().find((s) => s.baseUrl === baseUrl)!;


