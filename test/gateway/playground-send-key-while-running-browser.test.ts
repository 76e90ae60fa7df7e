import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { openPlayground } from '../support/playground-page.ts';

// Ctrl+Enter pressed again while an answer streams (a double press, an impatient one) checked the
// prompt box, emptied by the first press: the browser's "Please fill out this field" came up
// over the box, as if the question had not gone, while its answer was streaming.
describeInBrowser('the playground, the send key pressed while an answer streams (Chromium)', () => {
  const suite = browserAndConveyor();

  it('sends once, raises no "fill out this field" on the emptied prompt box, and says a question typed meanwhile is not sent yet', async () => {
    await suite.withPage(async (page) => {
      const sent: string[] = [];
      page.on('request', (req) => void (req.method() === 'POST' && req.url().endsWith('/v1/chat/completions') && sent.push(req.url())));
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.$eval('#prompt', (prompt) => prompt.addEventListener('invalid', () => document.body.setAttribute('data-invalid', 'yes')));
      await page.click('#examples button:text-is("Python: sine wave")');
      await page.keyboard.press('Control+Enter');
      await page.waitForFunction(() => (document.querySelector('.turn.assistant .content')?.textContent ?? '').length > 0);
      expect(await page.isDisabled('#send')).toBe(true);
      await page.keyboard.press('Control+Enter');
      expect(await page.textContent('#status')).toBe('streaming…');
      // A next question typed while the answer streams: the key sends nothing yet, and says so
      // (before, nothing happened, and the question sat in its box as if it had gone).
      await page.fill('#prompt', 'and in C?');
      await page.press('#prompt', 'Control+Enter');
      expect(await page.textContent('#status')).toMatch(/^streaming… · not sent: the answer before is still coming/);
      expect(await page.inputValue('#prompt')).toBe('and in C?');
      await page.click('#stop');
      await page.waitForSelector('.turn.assistant.finished');
      expect(await page.getAttribute('body', 'data-invalid')).toBeNull();
      expect(sent).toHaveLength(1);
    });
  }, 90_000);
});
