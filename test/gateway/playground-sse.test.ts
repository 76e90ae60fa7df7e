import { describe, expect, it } from 'vitest';

// The page's own reader (plain browser JavaScript), run under Node, which has the same fetch Response
// and streams: an SSE stream as a reverse proxy may rewrite it, read as the page reads it.
type ReadStream = (res: Response, onChunk: (chunk: unknown) => void) => Promise<void>;
const { readStream } = (await import(new URL('../../gateway/playground/sse.js', import.meta.url).href)) as { readStream: ReadStream };

/** The chunks the page takes from a stream sent in `reads` pieces, in order. */
async function chunksOf(...reads: string[]): Promise<unknown[]> {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const read of reads) controller.enqueue(encoder.encode(read));
      controller.close();
    },
  });
  const chunks: unknown[] = [];
  await readStream(new Response(body), (chunk) => chunks.push(chunk));
  return chunks;
}

describe("the playground's SSE reader reads the stream as the SSE spec does", () => {
  it('reads the gateway\'s own form: "data: " lines, events apart by a blank line, up to [DONE]', async () => {
    expect(await chunksOf('data: {"n":1}\n\ndata: {"n":2}\n\n', 'data: [DONE]\n\n')).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('reads \\r\\n and \\r line ends (a proxy may rewrite them), a \\r\\n split across reads being one line end', async () => {
    expect(await chunksOf('data: {"n":1}\r\n\r\ndata: {"n":2}\r', '\n\r\ndata: [DONE]\r\n\r\n')).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await chunksOf('data: {"n":1}\r\rdata: [DONE]\r\r')).toEqual([{ n: 1 }]);
  });

  it('takes "data:" without its space, joins an event\'s several data lines with \\n, and skips comments and other fields', async () => {
    expect(await chunksOf(': keep-alive\n\n', 'event: message\nid: 7\ndata:{"a":\ndata: [1,\ndata:2]}\nretry: 10\n\n', 'data:[DONE]\n\n')).toEqual([{ a: [1, 2] }]);
  });

  it('dispatches nothing for an event with no data, and still takes a stream cut before [DONE] for a cut answer', async () => {
    await expect(chunksOf('event: ping\n\ndata: {"n":1}\n\n')).rejects.toThrow('the stream ended before [DONE]');
  });
});
