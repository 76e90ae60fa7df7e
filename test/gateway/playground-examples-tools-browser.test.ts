import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { openPlayground } from '../support/playground-page.ts';

// A gateway with a built-in tool turned off (`plugins.search: false` here, `tools:` in a config
// file): its examples were offered all the same. "Search ×3" then sent `search` as the client's
// own tool, which the page does not run, and the plan's searches failed: neither showed what it
// is there to show, and nothing said why.
describeInBrowser('the playground\'s examples on a gateway without the search tool (Chromium)', () => {
  const suite = browserAndConveyor({ plugins: { search: false } });

  it('disables the examples that need a tool the gateway lacks, and says which tool', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.waitForSelector('#examples button[aria-disabled="true"]');
      const buttons = await page.$$eval('#examples button', (all) => all.map((b) => [b.textContent, b.getAttribute('aria-disabled') === 'true', (b as HTMLButtonElement).title]));
      expect(buttons).toEqual([
        ['Python: sine wave', false, ''],
        ['Search ×3', true, 'needs the search tool, which this gateway does not run'],
        ['Plan', true, 'needs the search tool, which this gateway does not run'],
        ['Validation (rejected)', false, ''],
        ['Database', false, ''],
        ['Calculator', false, ''],
      ]);
    });
  }, 90_000);

  // Disabled, it took no focus: Tab skipped it, and a keyboard or screen-reader user never met the
  // title saying which tool was missing. Focused and pressed now, it still fills in nothing.
  it('lets the keyboard reach a disabled example and its reason, and pressing it does nothing', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.waitForSelector('#examples button[aria-disabled="true"]');
      const search = page.locator('#examples button', { hasText: 'Search ×3' });
      await search.focus();
      expect(await search.evaluate((b) => b === document.activeElement)).toBe(true);
      await page.keyboard.press('Enter');
      expect(await page.locator('#prompt').inputValue()).toBe('');
    });
  }, 90_000);
});
