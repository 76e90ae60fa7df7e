import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MODEL } from '../llm-client/fixtures/vllm-streams.ts';
import { launchBrowser, servePage } from '../support/browser.ts';
import { describeInBrowser } from '../support/browser-suite.ts';
import { answeringTool, callThenAnswer, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';

const scripted = scriptedGateway();

// A body without a Content-Type is read as JSON when no Origin comes with it (vLLM reads it so;
// request-body.ts). A page can send one to any address without a preflight (a Blob or an
// ArrayBuffer has no type): this holds that Chromium adds the Origin that keeps it out.
describeInBrowser('a page on another origin posting a typeless body (no preflight) to a keyless gateway on loopback', () => {
  let browser: Browser;
  let other: Awaited<ReturnType<typeof servePage>>;
  beforeAll(async () => {
    browser = await launchBrowser();
    other = await servePage();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await other?.close();
  });

  it('reaches the gateway but runs nothing: no upstream request, no tool', async () => {
    const echoed: string[] = [];
    const echo = answeringTool('echo', (args) => {
      echoed.push(String(args.text));
      return String(args.text);
    });
    const gw = await scripted.start(callThenAnswer({ name: 'echo', arguments: { text: 'from the page' } }, (observation) => `The tool said: ${observation}.`), { tools: toolMap(echo) }, {});
    const page = await browser.newPage();
    try {
      await page.goto(`${other.origin}/`);
      const sent = await page.evaluate(
        async ({ url, model }) => {
          const json = JSON.stringify({ model, tools: [{ type: 'function', function: { name: 'echo' } }], messages: [{ role: 'user', content: 'echo something' }] });
          const blob = await fetch(`${url}/v1/chat/completions`, { method: 'POST', mode: 'no-cors', body: new Blob([json]) });
          const bytes = await fetch(`${url}/v1/chat/completions`, { method: 'POST', mode: 'no-cors', body: new TextEncoder().encode(json) });
          return [blob.type, bytes.type];
        },
        { url: gw.url, model: MODEL },
      );
      // Sent, and answered (opaquely, as no-cors answers are): the gateway refused both itself.
      expect(sent).toEqual(['opaque', 'opaque']);
      expect(scripted.upstream.requests).toHaveLength(0);
      expect(echoed).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
