import { createParser } from 'eventsource-parser';
import { performance } from 'node:perf_hooks';

export interface TimedStream {
  requestId: string;
  /** Request sent → first content token, ms. */
  ttftMs: number;
  /** Request sent → `data: [DONE]`, ms: the end-to-end latency a user feels. */
  totalMs: number;
  content: string;
}

/** One streaming chat request, timed from the client's side of the socket. */
export async function timedStream(gatewayUrl: string, body: Record<string, unknown>): Promise<TimedStream> {
  const t0 = performance.now();
  const res = await fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  if (res.status !== 200 || !res.body) throw new Error(`gateway answered ${res.status}: ${await res.text()}`);
  let ttftMs = NaN;
  let totalMs = NaN;
  let content = '';
  const parser = createParser({
    onEvent: (ev) => {
      if (ev.data === '[DONE]') {
        totalMs = performance.now() - t0;
        return;
      }
      const chunk = JSON.parse(ev.data) as { error?: { message: string }; choices?: Array<{ delta?: { content?: string } }> };
      if (chunk.error) throw new Error(`stream failed: ${chunk.error.message}`);
      const text = chunk.choices?.[0]?.delta?.content;
      if (text) {
        if (Number.isNaN(ttftMs)) ttftMs = performance.now() - t0;
        content += text;
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(bytes, { stream: true }));
  if (Number.isNaN(totalMs)) throw new Error('stream ended without [DONE]');
  return { requestId: res.headers.get('x-conveyor-request-id') ?? '', ttftMs, totalMs, content };
}
