import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { GatewayHandle } from '../../gateway/server.ts';
import { MODEL } from '../llm-client/fixtures/vllm-streams.ts';
import { launchBrowser, servePage } from '../support/browser.ts';
import { describeInBrowser } from '../support/browser-suite.ts';
import { answeringTool, callThenAnswer, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';

const scripted = scriptedGateway();
const KEY = 'page-key';

/** What a page's script got from the gateway: the stream's text and request id, or the browser's error. */
interface PageResult {
  status?: number;
  requestId?: string | null;
  text?: string;
  error?: string;
}

/** A gateway whose upstream calls the `echo` tool once, then answers with what it said. */
async function echoGateway(config: Parameters<typeof scripted.start>[2]): Promise<{ gw: GatewayHandle; echoed: string[] }> {
  const echoed: string[] = [];
  const echo = answeringTool('echo', (args) => {
    echoed.push(String(args.text));
    return String(args.text);
  });
  const gw = await scripted.start(
    callThenAnswer({ name: 'echo', arguments: { text: 'from the page' } }, (observation) => `The tool said: ${observation}.`),
    { tools: toolMap(echo) },
    config,
  );
  return { gw, echoed };
}

/** Runs in the page: a streamed chat completion with fetch, as a browser app would send it. */
function chatFromPage(page: Page, gatewayUrl: string, headers: Record<string, string>): Promise<PageResult> {
  return page.evaluate(
    async ({ url, headers, model }) => {
      try {
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ model, stream: true, tools: [{ type: 'function', function: { name: 'echo' } }], messages: [{ role: 'user', content: 'echo something' }] }),
        });
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        let text = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
        }
        return { status: res.status, requestId: res.headers.get('x-conveyor-request-id'), text };
      } catch (err) {
        return { error: String(err) };
      }
    },
    { url: gatewayUrl, headers, model: MODEL },
  );
}

/**
 * Runs in the page: opens the events WebSocket offering `protocols`; the first event's type once
 * open, or 'refused' when the upgrade fails.
 */
function followFromPage(page: Page, wsUrl: string, protocols: string[] = []): Promise<string> {
  return page.evaluate(
    ({ url, protocols }) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(url, protocols);
        ws.onmessage = (message) => {
          ws.close();
          resolve(JSON.parse(String(message.data)).type);
        };
        ws.onerror = () => resolve('refused');
      }),
    { url: wsUrl, protocols },
  );
}

/** Runs in the page: the official openai client, as a browser app uses it, streaming one answer. */
async function openaiClientFromPage(page: Page, gatewayUrl: string): Promise<{ content?: string; finish?: string | null; error?: string }> {
  // Served by the page's own server (test/support/browser.ts) from node_modules/openai.
  await page.addScriptTag({ type: 'module', content: "import OpenAI from '/openai/index.mjs'; window.OpenAI = OpenAI;" });
  await page.waitForFunction(() => 'OpenAI' in window);
  return page.evaluate(
    async ({ url, key, model }) => {
      try {
        const OpenAI = (window as unknown as { OpenAI: typeof import('openai').default }).OpenAI;
        const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, dangerouslyAllowBrowser: true, maxRetries: 0 });
        const stream = await client.chat.completions.create({
          model,
          stream: true,
          tools: [{ type: 'function', function: { name: 'echo' } }],
          messages: [{ role: 'user', content: 'echo something' }],
        });
        let content = '';
        let finish: string | null = null;
        for await (const chunk of stream) {
          content += chunk.choices[0]?.delta?.content ?? '';
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        return { content, finish };
      } catch (err) {
        return { error: String(err) };
      }
    },
    { url: gatewayUrl, key: KEY, model: MODEL },
  );
}

const JSON_WITH_KEY = { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'x-stainless-os': 'Linux' };

describeInBrowser('a real browser (Chromium) calling the gateway from a web page', () => {
  let browser: Browser;
  let allowed: Awaited<ReturnType<typeof servePage>>;
  let other: Awaited<ReturnType<typeof servePage>>;
  beforeAll(async () => {
    browser = await launchBrowser();
    [allowed, other] = await Promise.all([servePage(), servePage()]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await allowed?.close();
    await other?.close();
  });

  async function pageOn(origin: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    return page;
  }

  it('a page on an allowed origin streams an answer with a tool round and follows its events', async () => {
    const { gw, echoed } = await echoGateway({ allowedOrigins: [allowed.origin], apiKeys: [KEY] });
    const page = await pageOn(allowed.origin);
    try {
      const result = await chatFromPage(page, gw.url, JSON_WITH_KEY);
      expect(result.error).toBeUndefined();
      expect(result.status).toBe(200);
      expect(result.text).toContain('The tool said: from the page.');
      expect(result.text).toContain('data: [DONE]');
      expect(echoed).toEqual(['from the page']);
      // The exposed header lets the page find the request's timeline and follow it.
      expect(result.requestId).toMatch(/^chatcmpl-/);
      // A browser WebSocket cannot send Authorization: the key goes as a subprotocol, as with OpenAI's Realtime API.
      const events = `${gw.url.replace(/^http/, 'ws')}/v1/requests/${result.requestId}/events`;
      expect(await followFromPage(page, events, ['conveyor.events', `openai-insecure-api-key.${KEY}`])).toBe('request-start');
      expect(await followFromPage(page, events, ['conveyor.events', 'openai-insecure-api-key.wrong'])).toBe('refused');
      expect(await followFromPage(page, events)).toBe('refused');
    } finally {
      await page.close();
    }
  });

  it('the official openai client in the page (its x-stainless-* headers pass the preflight) streams the answer', async () => {
    const { gw, echoed } = await echoGateway({ allowedOrigins: [allowed.origin], apiKeys: [KEY] });
    const page = await pageOn(allowed.origin);
    try {
      const result = await openaiClientFromPage(page, gw.url);
      expect(result.error).toBeUndefined();
      expect(result.content).toContain('The tool said: from the page.');
      expect(result.finish).toBe('stop');
      expect(echoed).toEqual(['from the page']);
    } finally {
      await page.close();
    }
  });

  it('a page on any other origin is stopped at the preflight: nothing goes upstream, no tool runs', async () => {
    const { gw, echoed } = await echoGateway({ allowedOrigins: [allowed.origin], apiKeys: [KEY] });
    const page = await pageOn(other.origin);
    try {
      const result = await chatFromPage(page, gw.url, JSON_WITH_KEY);
      expect(result.error).toMatch(/TypeError/);
      expect(scripted.upstream.requests).toHaveLength(0);
      expect(echoed).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('keyless on loopback: a page of no allowed origin can neither post JSON nor slip a text/plain body past the preflight', async () => {
    const { gw, echoed } = await echoGateway({});
    const page = await pageOn(other.origin);
    try {
      expect((await chatFromPage(page, gw.url, { 'content-type': 'application/json' })).error).toMatch(/TypeError/);
      // text/plain needs no preflight, so this one reaches the gateway, which refuses its type.
      expect((await chatFromPage(page, gw.url, { 'content-type': 'text/plain' })).error).toMatch(/TypeError/);
      expect(scripted.upstream.requests).toHaveLength(0);
      expect(echoed).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('keyless, the events WebSocket opens for an allowed page and not for another', async () => {
    const { gw } = await echoGateway({ allowedOrigins: [allowed.origin] });
    const done = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const events = `${gw.url.replace(/^http/, 'ws')}/v1/requests/${done.headers.get('x-conveyor-request-id')}/events`;
    const [mine, theirs] = await Promise.all([pageOn(allowed.origin), pageOn(other.origin)]);
    try {
      expect(await followFromPage(mine, events)).toBe('request-start');
      expect(await followFromPage(theirs, events)).toBe('refused');
    } finally {
      await Promise.all([mine.close(), theirs.close()]);
    }
  });
});
