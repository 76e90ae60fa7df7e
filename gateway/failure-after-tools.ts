import { ClientAbortedError, ConveyorError, UpstreamResponseError } from '../core/errors.ts';
import type { Timeline } from './timeline.ts';

/**
 * A request that fails once its tools have started (a later round's upstream failure, or round
 * 1's with partial execution) says which ran, since the request sent again (an SDK's retry, a
 * user's "try again") runs them again, effects and all. The `x-should-retry: false` header tells
 * the SDKs; this tells the person reading the error.
 */
export function failureAfterTools(err: unknown, round: number, timeline: Timeline): unknown {
  if (err instanceof ClientAbortedError) return err;
  const refused = round > 1 ? refusedAfterTools(err, round) : err;
  if (refused !== err || !(err instanceof ConveyorError)) return refused;
  const ran = toolsRan(timeline);
  if (ran !== '') err.afterTools = `${round > 1 ? `in round ${round}, ` : ''}after this request's tools started (${ran}); sent again, it runs them again`;
  return err;
}

/**
 * A later round's prompt is the client's messages plus what the gateway appended (its tools'
 * results): the upstream's 400 for it ("your request has 33000 input tokens, reduce the length
 * of the input messages") must say so, or it sends the client after a request it did not make.
 * The code stays (`context_length_exceeded` for a prompt that no longer fits the context).
 */
function refusedAfterTools(err: unknown, round: number): unknown {
  // An error inside the stream is the server's failure, not a refusal of the grown prompt: rebuilt,
  // it lost `inStream` and went to the client as its own 400 (invalid_request_error), not a 502.
  if (!(err instanceof UpstreamResponseError) || err.status !== 400 || err.inStream) return err;
  const message = `round ${round} of this request, whose prompt is your messages plus the tool calls and results of ${roundsBefore(round)}, was refused by the upstream: ${err.message}`;
  return new UpstreamResponseError(err.status, message, err.param, err.code);
}

const roundsBefore = (round: number): string => (round === 2 ? 'round 1' : `rounds 1-${round - 1}`);

/**
 * The tools that started, in order of first start, with how many times each: "search ×2,
 * calculator". A call its tool rejected is left out: it was refused, not run (a validator's).
 */
function toolsRan(timeline: Timeline): string {
  const rejected = new Set(timeline.events.flatMap((e) => (e.type === 'abort' && e.callId !== undefined && e.detail?.startsWith('rejected:') ? [e.callId] : [])));
  const counts = new Map<string, number>();
  for (const e of timeline.events) {
    if (e.type === 'tool-start' && e.detail !== undefined && !rejected.has(e.callId!)) counts.set(e.detail, (counts.get(e.detail) ?? 0) + 1);
  }
  return [...counts].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)).join(', ');
}
