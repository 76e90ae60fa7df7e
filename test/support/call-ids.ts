/**
 * The gateway's call ids carry part of their request's id (`call_1a2b3c4d_r1_1`), so two requests
 * never share one; this drops that part, for comparing the messages of two requests.
 */
export function withoutRequestPart<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replace(/call_[0-9a-f]{8}_r/g, 'call_r')) as T;
}
