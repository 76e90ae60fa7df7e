import { createParser } from 'eventsource-parser';

export interface ChatChunk {
  id: string;
  object: string;
  model: string;
  choices: Array<{ index: number; delta: { role?: string; content?: string }; finish_reason: string | null }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  conveyor?: { type: string; [k: string]: unknown };
  error?: { message: string; code: string };
}

export interface StreamedChat {
  status: number;
  requestId: string | null;
  chunks: ChatChunk[];
  content: string;
  events: Array<NonNullable<ChatChunk['conveyor']>>;
  done: boolean;
}

/** POSTs a streaming chat request and collects every SSE chunk (a real HTTP client over loopback). */
export async function streamChat(baseUrl: string, body: Record<string, unknown>, onChunk?: (c: ChatChunk) => void, signal?: AbortSignal): Promise<StreamedChat> {
  const res = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
    signal,
  });
  const out: StreamedChat = { status: res.status, requestId: res.headers.get('x-conveyor-request-id'), chunks: [], content: '', events: [], done: false };
  const parser = createParser({
    onEvent: (ev) => {
      if (ev.data === '[DONE]') {
        out.done = true;
        return;
      }
      const chunk = JSON.parse(ev.data) as ChatChunk;
      out.chunks.push(chunk);
      for (const c of chunk.choices ?? []) out.content += c.delta.content ?? '';
      if (chunk.conveyor) out.events.push(chunk.conveyor);
      onChunk?.(chunk);
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(bytes, { stream: true }));
  return out;
}

export async function postJson(baseUrl: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as any };
}

export async function getJson(baseUrl: string, path: string) {
  const res = await fetch(`${baseUrl}${path}`);
  return { status: res.status, json: (await res.json()) as any };
}
