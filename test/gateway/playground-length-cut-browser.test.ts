import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { E2E_PROFILE, startTestConveyor } from '../support/conveyor-fixture.ts';
import { openPlayground, runExample } from '../support/playground-page.ts';

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

  it('says the tool-round limit, not the token limit, when the gateway ran out of rounds before the model answered', async () => {
    // One round: the calculator's call runs, and no round is left for the model to quote it.
    const oneRound = await startTestConveyor({ gateway: { maxToolRounds: 1 } });
    const page = await suite.browser.newPage();
    try {
      await openPlayground(page, oneRound.gateway.url);
      await runExample(page, 'Calculator');
      // The gateway says "length" for both; before, the page said the model's token limit cut it,
      // which no setting of the model's would have changed.
      expect(await page.textContent('.turn.assistant .note')).toBe('cut short: the gateway\'s limit of tool rounds (max_tool_rounds) came before the model answered');
      expect(await page.textContent('#status')).toMatch(/^done, cut short at the tool-round limit · request /);
      expect(await page.getAttribute('.turn.assistant', 'class')).toBe('turn assistant cut finished');
    } finally {
      await page.close();
      await oneRound.close();
    }
  }, 90_000);
});
