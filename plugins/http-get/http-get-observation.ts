import { extractPageText } from '../search/html-page-text.ts';
import { metaCharset, sniffsAsHtml } from './html-prescan.ts';
import type { ToolResult } from '../plugin-types.ts';
import type { LimitedGetResult } from './limited-get.ts';

/** Bytes sniffed for binary content: enough for any file header, little work for a large text. */
const SNIFF_BYTES = 4096;

/**
 * Binary rather than UTF-8 text: a NUL, or more than one character in ten that is invalid UTF-8
 * (U+FFFD) or a control character no text uses. A body cut inside a character is still text.
 */
export function looksBinary(body: Buffer): boolean {
  const head = body.subarray(0, SNIFF_BYTES);
  if (head.includes(0)) return true;
  // stream: an incomplete character at the end (a body or a sniff cut inside it) is held back, not U+FFFD.
  const text = new TextDecoder('utf-8').decode(head, { stream: true });
  const odd = text.match(/[\uFFFD\u0001-\u0008\u000E-\u001A\u001C-\u001F\u007F]/g)?.length ?? 0;
  return odd * 10 > text.length;
}

/**
 * What windows-1252's bytes 0x80-0x9F stand for (WHATWG's index; 5 bytes map to themselves). Node
 * 20.18.3+ and 22.13+ decode windows-1252, and ISO-8859-1 with it, as Latin-1 (nodejs/node#60888):
 * curly quotes, dashes and € reached the model as invisible C1 control characters.
 */
const WINDOWS_1252_C1 = '\u20AC\u0081\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\u008D\u017D\u008F\u0090\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\u009D\u017E\u0178';

/** The line that says the body is not whole, and why; '' when it is. */
function cutNote(result: LimitedGetResult, timeoutMs: number): string {
  if (result.timedOut) return `\n[cut: the body was still arriving at the ${timeoutMs} ms time limit; ${result.body.length} bytes read]`;
  return result.truncated ? `\n[cut at ${result.body.length} bytes]` : '';
}

/**
 * What the model reads: a status line, then the body as text: HTML reduced to its title and
 * content text (the same extractor as the search index; an untyped body that sniffs as HTML too),
 * other text as is, binary described (a
 * declared non-text type, a body still compressed, or UTF-8 that is not text by looksBinary:
 * a server that sends no content type, or a wrong one, must not hand the model NULs and U+FFFD).
 */
export function httpGetObservation(result: LimitedGetResult, options: { timeoutMs: number }): string {
  const head = `HTTP ${result.status} ${result.contentType || '(no content type)'} from ${result.url}`;
  const note = cutNote(result, options.timeoutMs);
  const bytes = result.body.length;
  if (result.contentEncoding !== undefined) return `${head}\n[${result.contentEncoding}-encoded content, ${bytes} bytes, not shown]${note}`;
  const type = result.contentType.toLowerCase();
  const textual = type === '' || /^text\/|json|xml|javascript|x-www-form-urlencoded/.test(type);
  if (!textual) return `${head}\n[${bytes} bytes of ${type}]${note}`;
  const html = type.includes('html') || (type === '' && sniffsAsHtml(result.body));
  const declared = /charset="?([\w.:-]+)/.exec(type)?.[1] ?? (html ? metaCharset(result.body) : undefined);
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(declared ?? 'utf-8');
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  // UTF-16 and other declared multi-byte charsets have NULs in plain text: only UTF-8 is sniffed.
  if (decoder.encoding === 'utf-8' && looksBinary(result.body)) return `${head}\n[binary content, ${bytes} bytes, not shown]${note}`;
  // A cut body may end inside a character: `stream` holds those bytes back, where a whole decode
  // showed them as U+FFFD. A whole body's broken end is the server's, and shows.
  let text = decoder.decode(result.body, { stream: result.truncated || result.timedOut });
  if (decoder.encoding === 'windows-1252') text = text.replace(/[\u0080-\u009F]/g, (c) => WINDOWS_1252_C1[c.charCodeAt(0) - 0x80]!);
  if (html) {
    const page = extractPageText(text);
    text = [page.title, ...page.sections.map((s) => s.text)].filter((t) => t !== '').join('\n');
  }
  return `${head}\n${text}${note}`;
}

/** The tool result for a completed fetch (any HTTP status: the model sees it and decides). */
export function httpGetResult(result: LimitedGetResult, options: { timeoutMs: number }): ToolResult {
  return {
    ok: true,
    content: httpGetObservation(result, options),
    data: { status: result.status, url: result.url, bytes: result.body.length, truncated: result.truncated, ...(result.timedOut ? { timedOut: true } : {}) },
  };
}
