import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { openPlayground } from '../support/playground-page.ts';

// A key pasted with a character outside Latin-1 (a typographic dash or quote from a document)
// cannot go in a header: fetch refuses it before anything is sent, and the page said "the gateway
// could not be reached", sending the reader to look at a gateway that was fine.
describeInBrowser('the playground, an API key a header cannot carry (Chromium)', () => {
  const suite = browserAndConveyor();

  it('says what is wrong with the key, sends nothing, and keeps the prompt', async () => {
    await suite.withPage(async (page) => {
      const sent: string[] = [];
      page.on('request', (req) => void (req.method() === 'POST' && sent.push(req.url())));
      await openPlayground(page, suite.conveyor.gateway.url);
      const why = 'the API key holds "\u2011" (U+2011), which an HTTP header cannot carry: type it again, or paste it as plain text';
      await page.fill('#key', 'sk\u2011abc');
      await page.press('#key', 'Tab');
      await page.waitForFunction(() => document.getElementById('status')!.textContent !== '');
      expect(await page.textContent('#status')).toBe(`GET /v1/models failed: ${why}`);
      await page.fill('#prompt', 'Say hello.');
      await page.click('#send');
      await page.waitForFunction(() => document.getElementById('status')!.textContent!.startsWith('not sent'));
      expect(await page.textContent('#status')).toBe(`not sent: ${why}`);
      expect(await page.getAttribute('#status', 'class')).toBe('error');
      expect(await page.inputValue('#prompt')).toBe('Say hello.');
      expect(await page.$$('.turn')).toHaveLength(0);
      expect(sent).toEqual([]);
    });
  }, 90_000);
});
