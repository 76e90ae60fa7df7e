import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';

/** The page's files, read once: the page is a few small static files and no build step. */
const FILES = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/playground/playground.js': { file: 'playground.js', type: 'text/javascript; charset=utf-8' },
  '/playground/timeline.js': { file: 'timeline.js', type: 'text/javascript; charset=utf-8' },
  '/playground/timeline-row.js': { file: 'timeline-row.js', type: 'text/javascript; charset=utf-8' },
  '/playground/follow-request-events.js': { file: 'follow-request-events.js', type: 'text/javascript; charset=utf-8' },
  '/playground/dom.js': { file: 'dom.js', type: 'text/javascript; charset=utf-8' },
  '/playground/error-message.js': { file: 'error-message.js', type: 'text/javascript; charset=utf-8' },
  '/playground/events-list.js': { file: 'events-list.js', type: 'text/javascript; charset=utf-8' },
  '/playground/sse.js': { file: 'sse.js', type: 'text/javascript; charset=utf-8' },
  '/playground/answer-turns.js': { file: 'answer-turns.js', type: 'text/javascript; charset=utf-8' },
  '/playground/answer-run.js': { file: 'answer-run.js', type: 'text/javascript; charset=utf-8' },
  '/playground/api-key.js': { file: 'api-key.js', type: 'text/javascript; charset=utf-8' },
  '/playground/examples.js': { file: 'examples.js', type: 'text/javascript; charset=utf-8' },
  '/playground/send-keys.js': { file: 'send-keys.js', type: 'text/javascript; charset=utf-8' },
  '/playground/playground.css': { file: 'playground.css', type: 'text/css; charset=utf-8' },
  '/playground/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
} as const;

export type PlaygroundPath = keyof typeof FILES;

/**
 * Only this origin's own scripts and styles, requests only to this origin, no framing: the page
 * shows what models and tools wrote (as text), and must never run it.
 */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

export const PLAYGROUND_PATHS: ReadonlySet<string> = new Set(Object.keys(FILES));
/** The route's pattern: exactly those paths. */
export const PLAYGROUND_PATTERN = new RegExp(`^(${[...PLAYGROUND_PATHS].map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`);

/**
 * GET / (and its script and style): the playground, a chat page on this gateway's own API that
 * shows tool events and a live timeline of decode and tool spans (gateway/playground/). It holds
 * no secrets, so it is served without a key, like /health; its requests carry the key typed in.
 */
export function playgroundRoute(): (path: string, res: ServerResponse) => void {
  const bodies = new Map<string, Buffer>();
  for (const [path, { file }] of Object.entries(FILES)) bodies.set(path, readFileSync(new URL(`./playground/${file}`, import.meta.url)));
  return (path, res) => {
    const body = bodies.get(path)!;
    res.writeHead(200, { 'content-type': FILES[path as PlaygroundPath].type, 'content-length': body.length, ...SECURITY_HEADERS }).end(body);
  };
}
