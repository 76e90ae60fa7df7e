import { ConveyorError } from './conveyor-error.ts';

// The gateway's own state: its configuration, its limits, its shutdown.

/** The gateway's configuration (CLI flags, `startGateway` options) is not valid: reported at start-up. */
export class GatewayConfigError extends ConveyorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('gateway_config_invalid', message, options);
  }
}

/** A simulator profile or scenario file is missing or does not match its schema. */
export class SimConfigError extends ConveyorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('sim_config_invalid', message, options);
  }
}

/**
 * The gateway is answering `maxConcurrentRequests` chat completions and `maxQueuedRequests` more
 * wait for a place: one more is turned away at once (HTTP 503 with Retry-After, which OpenAI's
 * clients retry), not queued without bound.
 */
export class GatewayBusyError extends ConveyorError {
  constructor(running: number, queued: number) {
    super('gateway_busy', `the gateway is at its limit of ${running} ${running === 1 ? 'request' : 'requests'} at once, with ${queued} more waiting; retry shortly`);
  }
}

/**
 * A request already has `limit` followers on its events WebSocket: one more is refused (HTTP 429)
 * rather than given another copy of every event the request marks.
 */
export class TooManyFollowersError extends ConveyorError {
  constructor(requestId: string, limit: number) {
    super('too_many_followers', `request ${requestId} already has ${limit} followers on its events, the most one request may have; close one, or read GET /v1/requests/${requestId}/timeline instead`);
  }
}

/** The gateway is draining for shutdown: requests in flight finish, new ones are turned away. */
export class ShuttingDownError extends ConveyorError {
  constructor(message = 'the gateway is shutting down; retry on another instance') {
    super('gateway_shutting_down', message);
  }
}

/** A request still running when the shutdown's grace period ran out (or a second signal came): cut, and told so. */
export function cutByShutdown(): ShuttingDownError {
  return new ShuttingDownError('the gateway shut down before this request finished (its shutdown grace period ran out, or a second signal cut it short); retry on another instance');
}
