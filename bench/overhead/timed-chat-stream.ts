import { performance } from 'node:perf_hooks';
import { request, type Dispatcher } from 'undici';

export interface StreamTiming {
  /** Request sent → first non-empty content delta, ms. */
  ttftMs: number;
  /** Gaps between consecutive content deltas as the client read them, ms (tokens in one read: 0). */
  itlMs: number[];
  /** Non-empty content deltas received. */
  tokens: number;
  /** Chunks carrying `delta.tool_calls` (a gateway that recognised a client tool call). */
  toolCallChunks: number;
  totalMs: number;
}

export interface ChatTarget {
  /** Base URL ending in /v1. */
  url: string;
  headers?: Record<string, string>;
  dispatcher: Dispatcher;
}

// A delta with text in it; `"content":""` (the role chunk, vLLM's empty EOS chunk) is not a token.
const CONTENT_TOKEN = /"content":"(?!")/;
const TOOL_CALLS = '"tool_calls":[';

/**
 * One streaming chat request timed from the client's side of the socket. SSE events are split
 * by hand and checked with one regex instead of JSON.parse: at 500 streams the client shares
 * two cores with the servers it measures, and should cost as little of them as it can.
 */
export async function timedChatStream(target: ChatTarget, body: string, signal?: AbortSignal): Promise<StreamTiming> {
  const t0 = performance.now();
  const res = await request(`${target.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body,
    dispatcher: target.dispatcher,
    signal,
  });
  if (res.statusCode !== 200) throw new Error(`${target.url} answered ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
  let ttftMs = NaN;
  let last = NaN;
  let tokens = 0;
  let toolCallChunks = 0;
  let done = false;
  let pending = '';
  const itlMs: number[] = [];
  const decoder = new TextDecoder();
  await new Promise<void>((resolve, reject) => {
    res.body.on('data', (bytes: Buffer) => {
      const now = performance.now();
      pending += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = pending.indexOf('\n\n')) >= 0) {
        const event = pending.slice(0, end);
        pending = pending.slice(end + 2);
        if (event === 'data: [DONE]') done = true;
        else if (event.includes('"error"') && event.startsWith('data: {"error"')) return reject(new Error(`stream failed: ${event.slice(0, 300)}`));
        else if (CONTENT_TOKEN.test(event)) {
          if (tokens === 0) ttftMs = now - t0;
          else itlMs.push(now - last);
          last = now;
          tokens++;
        } else if (event.includes(TOOL_CALLS)) toolCallChunks++;
      }
    });
    res.body.once('end', resolve);
    res.body.once('error', reject);
  });
  if (!done) throw new Error(`${target.url}: stream ended without [DONE]`);
  return { ttftMs, itlMs, tokens, toolCallChunks, totalMs: performance.now() - t0 };
}
