import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { InvalidRequestError, MethodNotAllowedError, NotFoundError, TooManyFollowersError } from '../core/errors.ts';
import { authenticate, KEY_SUBPROTOCOL_PREFIX } from './client-auth.ts';
import { toErrorResponse } from './error-response.ts';
import type { Timeline, TimelineEvent } from './timeline.ts';
import type { TimelineStore } from './timeline-store.ts';
import { pathOf } from './request-path.ts';

const EVENTS_PATH = /^\/v1\/requests\/(?<id>[\w-]+)\/events$/;

/** The close reason (code 1000) once the request's `request-end` has been sent. */
const ENDED = 'request ended';

/**
 * A follower that reads nothing while its request goes on (a piece event per statement of a long
 * script) would have every event held for it in the gateway's memory: past this much unsent it is
 * closed (1008) instead. A whole kept timeline's replay is well under it.
 */
const MAX_UNSENT_BYTES = 4 * 1024 * 1024;
const TOO_SLOW = 'follower too slow: more than 4 MiB of events unread';
/** How long a follower closed for being slow has to take the close frame before its socket is cut. */
const SLOW_CLOSE_MS = 1000;

/**
 * Each follower costs a copy of every event the request marks (serialised and queued for it):
 * past this many on one request, one more is refused (429). A trace viewer or two per request
 * is the use; a client opening hundreds on one id is not.
 */
export const MAX_FOLLOWERS_PER_REQUEST = 32;

/** The WebSocket versions ws speaks (RFC 6455 §4.4: a refusal names them). */
const WEBSOCKET_VERSIONS = '13, 8';

/**
 * `GET /v1/requests/:id/events` as a WebSocket: a request's timeline as it happens. Each message
 * is one timeline event as JSON (`{t, type, round?, callId?, detail?}`, the shape of
 * `GET /v1/requests/:id/timeline`'s `events`): first every event the request has had, then each
 * new one the moment it is marked, until `request-end`, after which the server closes (1000).
 * A trace viewer can follow tool calls start and finish while the model still decodes, without
 * reading the chat stream. Same API keys as the HTTP routes (from a browser, which cannot set
 * headers on a WebSocket, as the subprotocol `openai-insecure-api-key.<key>`); an unknown id is a
 * 404 on the upgrade, in the OpenAI error shape.
 */
export class RequestEventsSocket {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024, handleProtocols: chooseSubprotocol });
  private readonly server: Server;
  private readonly timelines: TimelineStore;
  private readonly apiKeys: readonly string[];
  private readonly guard: (req: IncomingMessage) => void;
  private readonly answered: (answer: UpgradeAnswer) => void;
  /** When each upgrade under way began, for the line of one that ws refuses. */
  private readonly started = new WeakMap<IncomingMessage, number>();
  /** Each timeline's followers: sockets accepted or being upgraded, until they close. */
  private readonly followers = new WeakMap<Timeline, number>();

  /**
   * `guard` runs first on every upgrade and throws to refuse it (Host and Origin checks);
   * `answered` hears of each WebSocket upgrade once, when it is refused or its socket closes.
   */
  constructor(server: Server, options: { timelines: TimelineStore; apiKeys: readonly string[]; guard?: (req: IncomingMessage) => void; answered?: (answer: UpgradeAnswer) => void }) {
    this.server = server;
    this.timelines = options.timelines;
    this.apiKeys = options.apiKeys;
    this.guard = options.guard ?? (() => {});
    this.answered = options.answered ?? (() => {});
    // A handshake ws itself refuses (no Sec-WebSocket-Key, a version it does not speak) is
    // answered here, in the OpenAI error shape and with its access line, like the gateway's own refusals.
    this.wss.on('wsClientError', (err: Error, socket: Duplex, req: IncomingMessage) => {
      this.refuse(req, socket, new InvalidRequestError(`WebSocket handshake: ${err.message}`), this.started.get(req) ?? performance.now());
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if ((req.headers.upgrade ?? '').toLowerCase() === 'websocket') this.upgrade(req, socket, head);
      else this.declineUpgrade(req, socket, head);
    });
  }

  /** Closes every follower's socket (the gateway is shutting down). */
  close(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const started = performance.now();
    this.started.set(req, started);
    socket.on('error', () => socket.destroy());
    try {
      this.guard(req);
      const path = pathOf(req.url ?? '/');
      const id = path === undefined ? undefined : EVENTS_PATH.exec(path)?.groups?.id;
      if (id === undefined) throw new NotFoundError(`no WebSocket route for ${path}`);
      // Refused here rather than by ws, whose refusals reach its error listener without their status.
      if (req.method !== 'GET') throw new MethodNotAllowedError(req.method ?? '?', path!, ['GET']);
      const version = req.headers['sec-websocket-version'];
      if (version !== '13' && version !== '8') {
        return this.refuse(req, socket, new InvalidRequestError(`WebSocket handshake: Sec-WebSocket-Version ${version ?? '(none)'} is not one this server speaks (${WEBSOCKET_VERSIONS})`), started, {
          'sec-websocket-version': WEBSOCKET_VERSIONS,
        });
      }
      const key = authenticate(req, this.apiKeys, { subprotocolKey: true });
      const timeline = this.timelines.get(id, key);
      if (!timeline) throw new NotFoundError(`no timeline for request ${id} (only recent requests are kept)`);
      const following = this.followers.get(timeline) ?? 0;
      if (following >= MAX_FOLLOWERS_PER_REQUEST) throw new TooManyFollowersError(id, MAX_FOLLOWERS_PER_REQUEST);
      // Counted from here, not from the callback, so handshakes in flight count too; the raw
      // socket's close comes once whether the upgrade completed or not.
      this.followers.set(timeline, following + 1);
      socket.once('close', () => this.followers.set(timeline, (this.followers.get(timeline) ?? 1) - 1));
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        ws.once('close', () => this.answered({ req, status: 101, durationMs: performance.now() - started }));
        follow(ws, timeline);
      });
    } catch (err) {
      this.refuse(req, socket, err, started);
    }
  }

  private refuse(req: IncomingMessage, socket: Duplex, err: unknown, started: number, extraHeaders: Record<string, string> = {}): void {
    const { status, body, headers } = toErrorResponse(err);
    this.answered({ req, status, durationMs: performance.now() - started, errorCode: body.error.code });
    const json = JSON.stringify(body);
    const lines = Object.entries({ ...headers, ...extraHeaders }).map(([name, value]) => `${name}: ${value}\r\n`);
    // Closed once written, as ws closes a refused handshake: a half-open socket would stay.
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join('')}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`,
      () => socket.destroy(),
    );
  }

  /**
   * Any other upgrade (`curl --http2` asks for h2c on every plain-http request) is ignored, as
   * RFC 9110 lets a server do: with an `upgrade` listener, node:http hands every upgrade request
   * here instead of to the routes, so the request goes back to the server as plain HTTP/1.1 —
   * its head rewritten without the upgrade headers, put back in front of what the socket has
   * read, and the socket handed to the server as a new connection.
   */
  private declineUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      const value = req.rawHeaders[i + 1]!;
      const lower = name.toLowerCase();
      if (lower === 'upgrade' || lower === 'http2-settings') continue;
      if (lower === 'connection') {
        const kept = value
          .split(',')
          .map((token) => token.trim())
          .filter((token) => token !== '' && !UPGRADE_TOKENS.has(token.toLowerCase()));
        if (kept.length > 0) lines.push(`${name}: ${kept.join(', ')}`);
        continue;
      }
      lines.push(`${name}: ${value}`);
    }
    socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
    this.server.emit('connection', socket);
  }
}

/** A WebSocket upgrade's answer: 101 once its socket closes, or the status it was refused with. */
export interface UpgradeAnswer {
  req: IncomingMessage;
  status: number;
  durationMs: number;
  errorCode?: string;
}

const UPGRADE_TOKENS = new Set(['upgrade', 'http2-settings']);

/**
 * A browser drops a connection whose handshake names none of the subprotocols it offered, so one
 * is chosen: the first that is not the key (`['conveyor.events', 'openai-insecure-api-key.<key>']`
 * gets `conveyor.events`), or the key's when it was offered alone.
 */
function chooseSubprotocol(offered: Set<string>): string | false {
  const protocols = [...offered];
  return protocols.find((p) => !p.startsWith(KEY_SUBPROTOCOL_PREFIX)) ?? protocols[0] ?? false;
}

function follow(ws: WebSocket, timeline: Timeline): void {
  let unsubscribe = (): void => {};
  /** False once the follower is closed for being too slow: nothing more goes to it. */
  const send = (event: TimelineEvent): boolean => {
    if (ws.readyState !== ws.OPEN) return false;
    if (ws.bufferedAmount > MAX_UNSENT_BYTES) {
      unsubscribe();
      ws.close(1008, TOO_SLOW);
      setTimeout(() => ws.terminate(), SLOW_CLOSE_MS).unref();
      return false;
    }
    ws.send(JSON.stringify(event));
    return true;
  };
  for (const event of timeline.events) if (!send(event)) return;
  if (timeline.ended) {
    ws.close(1000, ENDED);
    return;
  }
  unsubscribe = timeline.subscribe((event) => {
    if (!send(event)) return;
    if (event.type === 'request-end') {
      unsubscribe();
      ws.close(1000, ENDED);
    }
  });
  ws.on('close', unsubscribe);
  ws.on('error', unsubscribe);
}
