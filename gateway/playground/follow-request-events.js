// How the playground hears one request's server events (GET /): its events WebSocket, or its
// timeline polled where the browser cannot open that socket. Plain browser JavaScript, no build step.

/**
 * Follows request `id`: the events WebSocket (GET /v1/requests/:id/events) replays what the
 * request has had, then sends each event as it happens; `key`, if any, goes as the subprotocol a
 * browser WebSocket can carry. Each event goes to `onEvent`; `onLost(why)` says it can no longer
 * follow. `following()`: whether its events are still wanted (not closed, not ended, not lost).
 *
 * @param {{ id: string, key: string | undefined, headers: () => Record<string, string>, onEvent: (e: object) => void, onLost: (why: string) => void, following: () => boolean }} options
 * @returns {{ close: () => void }}
 */
export function followRequestEvents({ id, key, headers, onEvent, onLost, following }) {
  const url = new URL(`v1/requests/${encodeURIComponent(id)}/events`, document.baseURI).href.replace(/^http/, 'ws');
  let socket;
  try {
    socket = new WebSocket(url, key ? ['conveyor.events', `openai-insecure-api-key.${key}`] : []);
  } catch {
    // A key with characters a subprotocol cannot hold (a base64 key's `/`, `+`, `=`): the
    // browser refuses to open the socket. Read the same events from the timeline route instead,
    // which takes the key as a header, so the chat and its timeline still work.
    poll({ id, headers, onEvent, onLost, following });
    return { close() {} };
  }
  socket.onmessage = (message) => onEvent(JSON.parse(message.data));
  socket.onerror = () => onLost('events WebSocket refused');
  // The server closes a follower it drops (1008, too slow to read) and a shutdown cuts it (1006)
  // with no request-end sent: the bars would stop where they were, and the run read as followed.
  socket.onclose = (event) => {
    if (following()) onLost(`events WebSocket closed: ${event.code}${event.reason ? ` ${event.reason}` : ''}`);
  };
  return { close: () => socket.close() };
}

/** GET /v1/requests/:id/timeline every quarter second, each new event handed on, while they are wanted. */
async function poll({ id, headers, onEvent, onLost, following }) {
  let seen = 0;
  while (following()) {
    try {
      const res = await fetch(`v1/requests/${encodeURIComponent(id)}/timeline`, { headers: headers() });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const { events } = await res.json();
      for (const event of events.slice(seen)) if (following()) onEvent(event);
      seen = events.length;
    } catch {
      onLost('GET its timeline failed');
      return;
    }
    if (following()) await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
