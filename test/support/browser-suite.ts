import { afterAll, beforeAll, describe } from 'vitest';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import type { ConveyorHandle, ConveyorOptions } from '../../gateway/start-conveyor.ts';
import { browserRequired, chromiumPath, launchBrowser } from './browser.ts';
import { startTestConveyor } from './conveyor-fixture.ts';

/**
 * `describe` for tests that drive Chromium: skipped, and reported so, where none is installed,
 * except under CI, where a missing browser fails them (browser.ts).
 */
export const describeInBrowser = describe.skipIf(chromiumPath === undefined && !browserRequired);

export interface BrowserAndConveyor {
  readonly browser: Browser;
  readonly conveyor: ConveyorHandle;
  /** Runs `use` on a new page (`options`: its viewport, …), closed after it whatever happens. */
  withPage(use: (page: Page) => Promise<void>, options?: BrowserContextOptions): Promise<void>;
}

/**
 * A headless Chromium and the whole product on loopback for the suite this is called in: both
 * started (side by side) before its first test, both closed after its last. One that started
 * is closed even when the other failed to.
 */
export function browserAndConveyor(options?: ConveyorOptions): BrowserAndConveyor {
  let browser: Browser | undefined;
  let conveyor: ConveyorHandle | undefined;
  beforeAll(async () => {
    const [launched, started] = await Promise.allSettled([launchBrowser(), startTestConveyor(options)]);
    if (launched.status === 'fulfilled') browser = launched.value;
    if (started.status === 'fulfilled') conveyor = started.value;
    if (launched.status === 'rejected') throw launched.reason;
    if (started.status === 'rejected') throw started.reason;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await conveyor?.close();
  });
  return {
    async withPage(use, options) {
      const page = await this.browser.newPage(options);
      try {
        await use(page);
      } finally {
        await page.close();
      }
    },
    get browser() {
      if (!browser) throw new Error('browserAndConveyor: no browser yet (used outside a test?)');
      return browser;
    },
    get conveyor() {
      if (!conveyor) throw new Error('browserAndConveyor: no conveyor yet (used outside a test?)');
      return conveyor;
    },
  };
}
