import { InvalidRequestError, thrownMessage } from '../core/errors.ts';

/**
 * A request body as the JSON text sent upstream. A body nested deeper than JSON.stringify's stack
 * (a RangeError) is the caller's request at fault, not the upstream: an InvalidRequestError (400),
 * for which no replica is blamed or retried.
 */
export function requestJson(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (error) {
    throw new InvalidRequestError(`the request cannot be sent upstream: ${thrownMessage(error)}`);
  }
}
