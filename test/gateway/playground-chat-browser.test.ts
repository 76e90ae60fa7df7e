import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { openPlayground, runExample } from '../support/playground-page.ts';

// The playground as a chat, turn after turn: where the conversation's box scrolls to.

describeInBrowser('the playground conversation, turn after turn (Chromium)', () => {
  const suite = browserAndConveyor();

  it('scrolls to a question just sent, even when the reader had scrolled up to an earlier answer', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Python: sine wave');
      // The answer is longer than its box: the reader goes back to its start.
      expect(await page.$eval('#conversation', (box) => box.scrollHeight > box.clientHeight)).toBe(true);
      await page.$eval('#conversation', (box) => (box.scrollTop = 0));
      await page.click('#examples button:text-is("Calculator")');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished >> nth=1', { timeout: 60_000 });
      // Before: the box stayed at the top, the new question and its answer below it, out of view.
      const inView = await page.$eval('#conversation', (box) => {
        const bottom = box.getBoundingClientRect().bottom;
        return [...box.querySelectorAll('.turn')].slice(-2).map((turn) => turn.getBoundingClientRect().bottom <= bottom + 1);
      });
      expect(inView).toEqual([true, true]);
      expect(await page.textContent('.turn.assistant:last-of-type .content')).toContain('140200');
    }, { viewport: { width: 1280, height: 900 } });
  }, 90_000);
});
