import type { Socket } from 'node:net';
import type { buildConnector } from 'undici';

/**
 * A connection to a URL's origin, opened before the request may be sent (DNS, TCP and TLS
 * handshakes overlap the rest of the decode). `connector()` gives an undici Client that
 * connector: its first connection is this socket, later ones connect normally. Nothing is
 * written on the socket until the Client sends the request.
 */
export class OriginPreconnection {
  private readonly connect: buildConnector.connector;
  readonly origin: string;
  readonly #socket: Promise<Socket | undefined>;
  #used = false;

  constructor(url: URL, connect: buildConnector.connector) {
    this.connect = connect;
    this.origin = url.origin;
    // undici passes IPv6 hosts without their brackets.
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    this.#socket = new Promise((resolve) => {
      // A failure is not reported here: the request connects again and reports it with the call.
      connect({ host: url.host, hostname, protocol: url.protocol, port: url.port }, (err, socket) => resolve(err ? undefined : (socket ?? undefined)));
    });
  }

  /** Opens a preconnection for `url` and keeps it in a call's state, closing the one there before. */
  static open(state: Record<string, unknown>, url: URL, connect: buildConnector.connector): void {
    OriginPreconnection.take(state)?.close();
    state['preconnection'] = new OriginPreconnection(url, connect);
  }

  /** Removes and returns the preconnection kept in a call's state. */
  static take(state: Record<string, unknown>): OriginPreconnection | undefined {
    const found = state['preconnection'];
    delete state['preconnection'];
    return found instanceof OriginPreconnection ? found : undefined;
  }

  /** The connector for each origin a fetch visits: `pre`'s socket for its origin, else `connect`. */
  static connectorFor(pre: OriginPreconnection | undefined, connect: buildConnector.connector): (origin: string) => buildConnector.connector {
    return (origin) => (pre !== undefined && origin === pre.origin ? pre.connector() : connect);
  }

  connector(): buildConnector.connector {
    return (target, callback) => {
      if (this.#used) return this.connect(target, callback);
      this.#used = true;
      void this.#socket.then((socket) => (socket && !socket.destroyed ? callback(null, socket) : this.connect(target, callback)));
    };
  }

  /** Closes the socket unless a Client took it (the Client closes its own). */
  close(): void {
    if (this.#used) return;
    this.#used = true;
    void this.#socket.then((socket) => socket?.destroy());
  }
}
