import { parseUpstreamUrl } from '../../llm-client/upstream-url.ts';

/**
 * The likely fix when an upstream's `/models` answered 404 at start-up, or '' when there is none.
 * `--upstream http://127.0.0.1:8000` (no /v1) and a pasted endpoint
 * (`…/v1/chat/completions`) both start, and the banner said only "answered HTTP 404 (check the
 * upstream's base URL and API key)", which names no URL to write. A base path other than /v1 is
 * left alone: some servers (a proxy's `/openai/v1`) serve under another one on purpose.
 */
export function baseUrlHint(baseUrl: string, readinessError: string): string {
  if (!/\/models answered HTTP 404\b/.test(readinessError)) return '';
  const { pathname } = parseUpstreamUrl(baseUrl);
  const endpoint = /\/(chat\/completions|completions|models|responses|embeddings)$/.exec(pathname);
  const base = endpoint ? baseUrl.slice(0, baseUrl.lastIndexOf(endpoint[0])) : undefined;
  if (base !== undefined) return `; that is an endpoint's URL: the base URL is ${base}`;
  if (/\/v\d+$/.test(pathname)) return '';
  // A socket named without a base path takes its colon first (unix:/run/vllm.sock:/v1).
  const socketAlone = baseUrl.startsWith('unix:') && !baseUrl.slice('unix:'.length).includes(':');
  return `; OpenAI-compatible servers (vLLM, SGLang, llama.cpp) answer under /v1: ${socketAlone ? `${baseUrl}:` : baseUrl.replace(/\/+$/, '')}/v1?`;
}
