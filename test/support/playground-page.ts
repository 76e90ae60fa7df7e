import type { Page } from 'playwright-core';
import { SIM_MODEL } from './conveyor-fixture.ts';

/** Waits until the playground has listed the gateway's models (the simulator's among them). */
export const modelsListed = (page: Page) => page.waitForSelector(`#model option:text-is("${SIM_MODEL}")`, { state: 'attached' });

/** Opens the playground and waits until it has listed the gateway's models. */
export async function openPlayground(page: Page, gatewayUrl: string): Promise<void> {
  await page.goto(`${gatewayUrl}/`);
  await modelsListed(page);
}

/** Picks one of the page's examples by its button's text ("Calculator"), sends it, and waits for the whole answer. */
export async function runExample(page: Page, example: string): Promise<void> {
  await page.click(`#examples button:text-is("${example}")`);
  await page.click('#send');
  await page.waitForSelector('.turn.assistant.finished', { timeout: 60_000 });
}
