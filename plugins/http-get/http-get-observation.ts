import { extractPageText } from '../search/html-page-text.ts';
import type { ToolResult } from '../plugin-types.ts';
import type { LimitedGetResult } from './limited-get.ts';

/**
 * What the model reads: a status line, then the body as text: HTML reduced to its title and
 * content text (the same extractor as the search index), other text as is, binary described.
 */
export function httpGetObservation(result: LimitedGetResult): string {
  const head = `HTTP ${result.status} ${result.contentType || '(no content type)'} from ${result.url}`;
  const note = result.truncated ? `\n[cut at ${result.body.length} bytes]` : '';
  const type = result.contentType.toLowerCase();
  const textual = type === '' || /^text\/|json|xml|javascript|x-www-form-urlencoded/.test(type);
  if (!textual) return `${head}\n[${result.body.length} bytes of ${type}]${note}`;
  const charset = /charset="?([\w-]+)/.exec(type)?.[1] ?? 'utf-8';
  let text: string;
  try {
    text = new TextDecoder(charset).decode(result.body);
  } catch {
    text = new TextDecoder('utf-8').decode(result.body);
  }
  if (type.includes('html')) {
    const page = extractPageText(text);
    text = [page.title, ...page.sections.map((s) => s.text)].filter((t) => t !== '').join('\n');
  }
  return `${head}\n${text}${note}`;
}

/** The tool result for a completed fetch (any HTTP status: the model sees it and decides). */
export function httpGetResult(result: LimitedGetResult): ToolResult {
  return {
    ok: true,
    content: httpGetObservation(result),
    data: { status: result.status, url: result.url, bytes: result.body.length, truncated: result.truncated },
  };
}
