import type { ServerResponse } from 'node:http';
import { pino, type Logger } from 'pino';
import { ConveyorError } from '../core/errors.ts';
import type { ReplicaHealthEvent } from '../llm-client/upstream-replicas.ts';
import { isExpectedError } from './error-response.ts';
import type { Timeline } from './timeline.ts';
import { PLAYGROUND_PATHS } from './playground-route.ts';
import type { UpgradeAnswer } from './request-events-socket.ts';
import { REQUEST_ID_HEADER } from './request-id.ts';
import { bytesOf, connectionOf } from './response-bytes.ts';
import { pathOf } from './request-path.ts';

export type { Logger } from 'pino';

/** What an embedding that passes no logger gets: nothing is formatted or written. */
export const silentLogger: Logger = pino({ enabled: false });

/** What the chat route knows about a completion, for its access line. */
export interface CompletionFacts {
  timeline: Timeline;
  model: string;
  stream: boolean;
  partialExecution: boolean;
  /** The code of an error event a stream ended with, after its 200 went out. */
  streamError?: string;
}

/** How long a closed response's line waits for its request to end (a tool that ignores its abort must not hold it). */
const END_WAIT_MS = 1_000;

/**
 * Paths polled by probes and scrapers, and the playground's static files: logged at debug, not
 * info, so they do not bury the API traffic.
 */
const QUIET_PATHS = new Set(['/health', '/health/ready', '/metrics', ...PLAYGROUND_PATHS]);

/**
 * One line per HTTP request when its response closes: method, path, status, duration, the error code
 * the client got; for a chat completion also how it ended, its first token, rounds, tool calls and the
 * upstreams that served it, read from its timeline (as the metrics are). Nothing the client or the
 * model wrote is logged.
 */
export class AccessLog {
  readonly log: Logger;
  readonly #completions = new WeakMap<ServerResponse, CompletionFacts>();
  /** Error answers a route wrote itself (a forwarded upstream error), by the code they carry. */
  readonly #errorCodes = new WeakMap<ServerResponse, string>();
  /** What an error said that its client was not told (the upstream's address), for the operator. */
  readonly #errorDetails = new WeakMap<ServerResponse, string>();
  /** Requests whose rest Node's parser refused, answered by the server's hook, not the route (a body late past requestMs: 408). */
  readonly #parserAnswers = new WeakMap<ServerResponse, { status: number; code: string; parserError: string | undefined }>();

  constructor(log: Logger) {
    this.log = log;
  }

  /** The chat route names the completion a response carries. */
  describe(res: ServerResponse, facts: CompletionFacts): void {
    if (this.log.isLevelEnabled('info')) this.#completions.set(res, facts);
  }

  /** The client's error body left out part of `err`'s message: the line keeps it as `error_detail`. */
  errorSent(res: ServerResponse, err: unknown): void {
    if (err instanceof ConveyorError && err.clientMessage !== undefined && this.log.isLevelEnabled('info')) this.#errorDetails.set(res, err.message);
  }

  /** A route answered with an error it wrote itself (not thrown): its line names the code. */
  errorAnswered(res: ServerResponse, code: string): void {
    if (this.log.isLevelEnabled('info')) this.#errorCodes.set(res, code);
  }

  /**
   * Node's parser refused the rest of the request `res` answers (its body), and the connection was
   * answered `status` without the route; `code`: its error code (request_timeout, unparsable_request).
   */
  parserAnswered(res: ServerResponse, status: number, code: string, parserError: string | undefined): void {
    this.#parserAnswers.set(res, { status, code, parserError });
  }

  /**
   * `errorCode`: the OpenAI error code the gateway answered with, when it answered with one (as a
   * status, or as a stream's closing error event).
   */
  ended(method: string, path: string, res: ServerResponse, durationMs: number, errorCode: string | undefined): void {
    const level = QUIET_PATHS.has(path) ? 'debug' : 'info';
    if (!this.log.isLevelEnabled(level)) return;
    const completion = this.#completions.get(res);
    const write = (): void => {
      // A stream that failed after its 200 told its client by an error event, not a status.
      const code = errorCode ?? completion?.streamError ?? this.#errorCodes.get(res) ?? this.#parserAnswers.get(res)?.code;
      this.log[level](this.#line(method, path, res, durationMs, code, completion), 'request');
    };
    // The response of a client that left closes a moment before its request has ended (the
    // session sees the abort next): the line waits for that end, briefly, so that its outcome
    // (client_aborted) is the one /metrics counts rather than `unfinished`.
    const timeline = completion?.timeline;
    if (!timeline || timeline.ended) return write();
    let done = false;
    const once = (): void => {
      if (done) return;
      done = true;
      unsubscribe();
      clearTimeout(timer);
      write();
    };
    const unsubscribe = timeline.subscribe((e) => void (e.type === 'request-end' && once()));
    const timer = setTimeout(once, END_WAIT_MS);
    timer.unref();
  }

  #line(method: string, path: string, res: ServerResponse, durationMs: number, errorCode: string | undefined, completion: CompletionFacts | undefined) {
    const parsed = this.#parserAnswers.get(res);
    return {
      method,
      path,
      // Nothing went out to a client that left first: nginx's 499, not the 200 Node presets.
      status: !res.headersSent && clientLeft(res) ? 499 : (parsed?.status ?? res.statusCode),
      duration_ms: round1(durationMs),
      ...byteCounts(res),
      ...(errorCode === undefined ? {} : { error: errorCode }),
      ...(parsed?.parserError === undefined ? {} : { parser_error: parsed.parserError }),
      ...(this.#errorDetails.has(res) ? { error_detail: this.#errorDetails.get(res) } : {}),
      // A request refused before its completion began (bad body, busy) still has the id its
      // client was given, so the client's quote of it finds this line.
      ...(completion ? summarize(completion) : requestIdOf(res)),
      // The server's own answer to a refused body (a 408) went out whole: nothing was cut.
      ...(res.writableFinished ? {} : clientLeft(res) ? { client_gone: true } : parsed ? {} : { cut_short: true }),
    };
  }

  /**
   * A WebSocket upgrade (the request-events socket) gets its line too: a refused one (a wrong key,
   * an unknown id) when it is refused, an accepted one (status 101) when its socket closes.
   */
  upgraded({ req, status, durationMs, errorCode }: UpgradeAnswer): void {
    this.log.info(
      {
        method: req.method,
        path: pathOf(req.url ?? '/') ?? req.url,
        status,
        duration_ms: round1(durationMs),
        websocket: true,
        ...(errorCode === undefined ? {} : { error: errorCode }),
      },
      'request',
    );
  }

  /** A request Node's HTTP parser refused before it was one (431, 400; 408 for headers late past headersMs): no method or path to name. */
  unparsed(status: number, code: string, parserError: string | undefined): void {
    this.log.info({ status, error: code, ...(parserError ? { parser_error: parserError } : {}) }, 'request');
  }

  /** A replica starts to rest after a failure (warn), or takes streams again (info). */
  replicaHealth(event: ReplicaHealthEvent): void {
    if (event.type === 'resting') {
      const reason = event.error instanceof Error ? event.error.message : String(event.error);
      this.log.warn({ replica: event.baseUrl, rest_ms: event.restMs, consecutive_failures: event.consecutiveFailures, reason }, 'upstream replica resting');
    } else {
      this.log.info({ replica: event.baseUrl, after_failures: event.consecutiveFailures }, 'upstream replica back');
    }
  }

  /**
   * An error the gateway did not expect (a bug, not a refused request or a failing upstream, which
   * the access line names by code) is logged with its stack: the client only sees `internal_error`.
   */
  unexpected(err: unknown, context: Record<string, unknown>): void {
    if (!isExpectedError(err)) this.log.error({ ...context, err }, 'unexpected error');
  }
}

function summarize({ timeline, model, stream, partialExecution }: CompletionFacts): Record<string, unknown> {
  // A round counts once however many replicas took it (one that failed before its first token hands it on).
  const rounds = new Set<number | undefined>();
  let toolCalls = 0;
  let rejected = 0;
  let firstToken: number | undefined;
  const upstreams = new Set<string>();
  for (const e of timeline.events) {
    // A round counts once the upstream took it, as in conveyor_rounds_total: one it refused decoded nothing.
    if (e.type === 'upstream-accepted') {
      rounds.add(e.round);
      if (e.detail) upstreams.add(e.detail);
    } else if (e.type === 'tool-start') toolCalls += 1;
    else if (e.type === 'abort' && e.detail?.startsWith('rejected')) rejected += 1;
    else if (e.type === 'first-token') firstToken ??= e.t;
  }
  const end = timeline.end;
  return {
    request_id: timeline.requestId,
    model,
    stream,
    partial_execution: partialExecution,
    outcome: end?.detail ?? 'unfinished',
    ...(firstToken === undefined ? {} : { ttft_ms: round1(firstToken) }),
    rounds: rounds.size,
    tool_calls: toolCalls,
    ...(rejected > 0 ? { rejected_calls: rejected } : {}),
    upstreams: [...upstreams],
  };
}

/**
 * The client closed its connection (its FIN, or a reset) before the answer was whole; otherwise the
 * gateway cut the answer itself: a forwarded stream whose upstream failed after the status line,
 * or a connection a shutdown closed.
 */
function clientLeft(res: ServerResponse): boolean {
  const socket = connectionOf(res);
  return socket !== undefined && (socket.readableEnded || socket.errored !== null);
}

function byteCounts(res: ServerResponse): { bytes_sent?: number; bytes_received?: number } {
  const counts = bytesOf(res);
  return counts ? { bytes_sent: counts.sent, bytes_received: counts.received } : {};
}

function requestIdOf(res: ServerResponse): { request_id?: string } {
  const id = res.getHeader(REQUEST_ID_HEADER);
  return typeof id === 'string' ? { request_id: id } : {};
}

function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}
