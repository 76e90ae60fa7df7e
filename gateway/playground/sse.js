// The playground's reader of a chat completion's SSE stream (GET /). Plain browser JavaScript, no build step.

/**
 * Reads the SSE stream and hands each `data:` payload, parsed, to `onChunk`. A stream that ends
 * before its [DONE] was cut (a dropped connection, a proxy's timeout, the gateway failing after
 * its headers): an error, so the cut answer is not taken for a whole one and sent back as history.
 */
export async function readStream(res, onChunk) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read().catch((err) => {
      // Stop is the reader's own doing. Anything else is the connection cut under a chunked
      // response (the gateway killed, the network gone), the usual way a stream ends early: the
      // browser says only "network error", which read as if the request had never gone out.
      if (err.name === 'AbortError') throw err;
      throw new Error(`the connection was cut before the answer's end (${err.message}): the answer is incomplete`);
    });
    if (done) throw new Error('the stream ended before [DONE]: the connection was cut, the answer is incomplete');
    buffered += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const data = line.slice(6);
        if (data === '[DONE]') return;
        onChunk(JSON.parse(data));
      }
    }
  }
}
