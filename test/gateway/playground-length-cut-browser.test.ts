import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { E2E_PROFILE } from '../support/conveyor-fixture.ts';
import { openPlayground } from '../support/playground-page.ts';

// An answer the token limit cut (finish_reason "length": the model's context is full, or
// max_tokens) read "done" like a whole one: nothing on the page said the model had not finished.
describeInBrowser('the playground, an answer the token limit cut (Chromium)', () => {
  // "Say hello." is 14 prompt tokens: the context leaves the default reply 6 of its 20.
  const suite = browserAndConveyor({ sim: { profile: { ...E2E_PROFILE, maxModelLen: 20 } } });

  it('says in the bubble and the status line that the answer was cut at the token limit', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.fill('#prompt', 'Say hello.');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished', { timeout: 60_000 });
      expect((await page.textContent('.turn.assistant .content'))!.length).toBeGreaterThan(0);
      expect(await page.textContent('.turn.assistant .note')).toBe('cut short: the model reached its token limit (finish_reason "length")');
      expect(await page.textContent('#status')).toMatch(/^done, cut short at the token limit · request /);
      // Not a failure: the answer is what the model wrote, and goes back with the next question.
      expect(await page.getAttribute('.turn.assistant', 'class')).toBe('turn assistant cut finished');
      expect(await page.$$('.turn.user.left-out')).toHaveLength(0);
    });
  }, 90_000);
});
