// The playground's reader of a chat completion's SSE stream (GET /). Plain browser JavaScript, no build step.

/**
 * Reads the SSE stream and hands each event's data, parsed, to `onChunk`. A stream that ends
 * before its [DONE] was cut (a dropped connection, a proxy's timeout, the gateway failing after
 * its headers): an error, so the cut answer is not taken for a whole one and sent back as history.
 *
 * Read as the SSE spec says (html.spec.whatwg.org, "Interpreting an event stream"), not only in
 * the gateway's own form: a reverse proxy in front of it may rewrite line ends to \r\n, write
 * `data:` without its space, add comments or split a payload over several `data:` lines. Read
 * as `\n\n`-apart `data: ` lines, a \r\n stream was never seen to end, and the answer stood empty.
 */
export async function readStream(res, onChunk) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const event = new SseEvent();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read().catch((err) => {
      // Stop is the reader's own doing. Anything else is the connection cut under a chunked
      // response (the gateway killed, the network gone), the usual way a stream ends early: the
      // browser says only "network error", which read as if the request had never gone out.
      if (err.name === 'AbortError') throw err;
      throw new Error(`the connection was cut before the answer's end (${err.message}): the answer is incomplete`);
    });
    if (!done) buffered += decoder.decode(value, { stream: true });
    // A \r at the end may be the first half of a \r\n the next read completes: it waits, or the
    // one line end would count as two, an empty line that ends the event early. At the stream's
    // end it is a line end (a stream in \r alone ends `data: [DONE]\r\r`).
    const whole = !done && buffered.endsWith('\r') ? buffered.length - 1 : buffered.length;
    const lines = buffered.slice(0, whole).split(/\r\n|\r|\n/);
    buffered = lines.pop() + buffered.slice(whole);
    for (const line of lines) {
      const data = event.line(line);
      if (data === undefined) continue;
      if (data === '[DONE]') return;
      onChunk(JSON.parse(data));
    }
    if (done) throw new Error('the stream ended before [DONE]: the connection was cut, the answer is incomplete');
  }
}

/** One event's fields as its lines come; `line` gives its data once a blank line ends it. */
class SseEvent {
  constructor() {
    this.data = [];
  }

  /** The event's data when `line` ends it (and it had some), else undefined. */
  line(line) {
    if (line === '') {
      const data = this.data.join('\n');
      this.data = [];
      // An event with no data (or an empty one) is not dispatched, as in the spec.
      return data === '' ? undefined : data;
    }
    // A comment (`: keep-alive`); every field other than data (event, id, retry) the page has no use for.
    const colon = line.indexOf(':');
    if (colon === 0) return undefined;
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') return undefined;
    const value = colon < 0 ? '' : line.slice(colon + 1);
    this.data.push(value.startsWith(' ') ? value.slice(1) : value);
    return undefined;
  }
}
