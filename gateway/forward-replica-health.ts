import { UpstreamConnectionError, UpstreamIdleTimeoutError, UpstreamResponseError } from '../core/errors.ts';
import { classifyReplicaFailure, type ReplicaFailureContext } from '../llm-client/failover-stream.ts';
import type { Replica, UpstreamReplicas } from '../llm-client/upstream-replicas.ts';
import type { ForwardedErrorAnswer } from './forwarded-error.ts';

/** One forwarded request's try on one replica. */
export interface ReplicaAttempt {
  replicas: UpstreamReplicas;
  replica: Replica;
  /** No other replica will be tried: whatever this one answers goes to the client. */
  last: boolean;
  /** On the replicas' clock (UpstreamReplicas.failed). */
  startedAt: number;
}

/**
 * A replica's error answer, read whole, as a chat's failover reads it (classifyReplicaFailure):
 * the error to try the next replica with (a bare 500, 401/403, 502–504, a 404 model_not_found for
 * the model the gateway names rest the replica; a 429 or a 500 that says why do not), or, for the
 * last replica and for an error that is the request's own, undefined: the answer goes to the client.
 * An error answer never counts as the replica's success (a dead engine's FastAPI still answers 404).
 */
export function heldRefusal(attempt: ReplicaAttempt, held: ForwardedErrorAnswer, context: ReplicaFailureContext): Error | undefined {
  const error = held.upstreamError();
  const kind = classifyReplicaFailure(error, context);
  if (kind === 'rest') attempt.replicas.failed(attempt.replica, error, attempt.startedAt);
  return kind === 'final' || attempt.last ? undefined : error;
}

/** A status another replica may not answer, as a chat's failover counts it (429, 401/403, 500, 502–504), else undefined. */
export function replicaRefusal(status: number): UpstreamResponseError | undefined {
  if (status < 400) return undefined;
  const error = new UpstreamResponseError(status, `upstream answered HTTP ${status}`);
  return classifyReplicaFailure(error) === 'final' ? undefined : error;
}

/** The last replica's refusal, passed to the client as it is: the replica's own failure (a bare 500, 401/403, 502–504) rests it. */
export function recordRefusal({ replicas, replica, startedAt }: ReplicaAttempt, refusal: UpstreamResponseError): void {
  if (classifyReplicaFailure(refusal) === 'rest') replicas.failed(replica, refusal, startedAt);
}

/**
 * An answer that broke off after its headers, not by the client's or the gateway's doing (the
 * caller checks its signal): whether that is the replica's failure, as the chat's failover counts
 * one. Silence past the body timeout before the first byte is its first-token timeout (a wedged
 * engine sends its headers, then nothing); a lost connection is the replica's at any point (it
 * crashed or was killed). Silence after the first byte is not counted, as a chat's idle timeout
 * is not: a replica under load may hold one sequence back, and it served this one already.
 */
export function brokeOffByReplica(error: unknown, bodyStarted: boolean): boolean {
  return error instanceof UpstreamConnectionError || (!bodyStarted && error instanceof UpstreamIdleTimeoutError);
}
