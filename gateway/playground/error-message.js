// What a failed request's error says on the playground page (GET /): the gateway's own errors
// are OpenAI's shape, but a proxy in front of it (an auth proxy, a load balancer) answers in its
// own. Plain browser JavaScript, no build step.

/**
 * The words of an error body: OpenAI's `error.message`, else an `error` string, a top-level
 * `message` or a `detail` (FastAPI's); undefined if it has none of them as text.
 */
export function errorWords(body) {
  for (const words of [body?.error?.message, body?.error, body?.message, body?.detail]) if (typeof words === 'string' && words.trim() !== '') return words.trim();
  return undefined;
}

/**
 * A refused response's words: its JSON body's (errorWords), else `HTTP <status>` and the first
 * line of a plain-text body. A proxy's HTML page is not put in the status line: its markup would
 * show as text.
 */
export async function responseError(res) {
  const text = await res.text().catch(() => '');
  let body;
  try {
    body = JSON.parse(text);
  } catch {}
  const words = errorWords(body);
  if (words !== undefined) return words;
  const line = /^text\/plain\b/i.test(res.headers.get('content-type') ?? '') ? text.trim().split('\n')[0].slice(0, 200) : '';
  return `HTTP ${res.status}${line ? `: ${line}` : ''}`;
}
