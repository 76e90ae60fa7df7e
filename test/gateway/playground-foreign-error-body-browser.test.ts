import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { openPlayground } from '../support/playground-page.ts';

// Errors not in OpenAI's shape, `{"error": {"message": …}}`: what a proxy in front of the gateway
// (an auth proxy, a load balancer) answers. The page read only error.message, so it said
// "HTTP 429" for `{"error": "…"}` and "undefined" for such an error mid-stream: the words
// that said what was wrong were there and never shown.
describeInBrowser('the playground, an error body not in OpenAI\'s shape (Chromium)', () => {
  const suite = browserAndConveyor();

  /** Sends "hello" with the chat request answered by `fulfil`, and gives the answer's note once it has finished. */
  async function noteFor(page: Page, fulfil: { status: number; contentType: string; body: string }): Promise<string | null> {
    await openPlayground(page, suite.conveyor.gateway.url);
    await page.route('**/v1/chat/completions', (route) => route.fulfill(fulfil));
    await page.fill('#prompt', 'hello');
    await page.click('#send');
    await page.waitForSelector('.turn.assistant.finished');
    return page.textContent('.turn.assistant .note');
  }

  it('shows an error given as a string, a message at the top level, or a plain-text body', async () => {
    const cases = [
      [{ status: 429, contentType: 'application/json', body: '{"error":"quota exceeded for this key"}' }, 'error: quota exceeded for this key'],
      [{ status: 403, contentType: 'application/json', body: '{"message":"Forbidden: IP not allowed"}' }, 'error: Forbidden: IP not allowed'],
      [{ status: 502, contentType: 'text/plain', body: 'upstream connect error or disconnect/reset before headers\n' }, 'error: HTTP 502: upstream connect error or disconnect/reset before headers'],
      // A proxy's HTML page is not put in the status line.
      [{ status: 502, contentType: 'text/html', body: '<html><body><h1>502 Bad Gateway</h1></body></html>' }, 'error: HTTP 502'],
      // OpenAI's own shape, as before.
      [{ status: 400, contentType: 'application/json', body: '{"error":{"message":"model not found","type":"invalid_request_error"}}' }, 'error: model not found'],
    ] as const;
    for (const [fulfil, note] of cases) await suite.withPage(async (page) => expect(await noteFor(page, fulfil)).toBe(note));
  }, 90_000);

  it('shows an error chunk given as a string mid-stream, not "undefined"', async () => {
    await suite.withPage(async (page) => {
      const body = ['data: {"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}', 'data: {"error":"upstream overloaded"}', 'data: [DONE]', ''].join('\n\n');
      expect(await noteFor(page, { status: 200, contentType: 'text/event-stream', body })).toBe('error: upstream overloaded');
    });
  }, 90_000);
});
