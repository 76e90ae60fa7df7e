import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { openPlayground, runExample } from '../support/playground-page.ts';

// The events socket cut (1006: the gateway restarting, a proxy's idle timeout) after the answer
// was done but before the server's request-end: the status line became the timeline's trouble
// alone, and the run's own ending ("done · request …", "stopped") was gone from it.
describeInBrowser('the playground, a timeline lost after its answer ended (Chromium)', () => {
  const suite = browserAndConveyor();

  /** An events socket that sends nothing and is cut (1006) once the status line starts with `when`. */
  const cutOnceStatus = (when: string) => {
    window.WebSocket = class {
      onmessage: ((e: MessageEvent) => void) | null = null;
      onclose: ((e: CloseEvent) => void) | null = null;
      onerror: ((e: Event) => void) | null = null;
      constructor() {
        const wait = setInterval(() => {
          if (!document.getElementById('status')!.textContent!.startsWith(when)) return;
          clearInterval(wait);
          this.onclose?.(new CloseEvent('close', { code: 1006, wasClean: false }));
        }, 10);
      }
      close(): void {}
    } as unknown as typeof WebSocket;
  };

  it('keeps "done · request …" and adds that the timeline could not follow', async () => {
    await suite.withPage(async (page) => {
      await page.addInitScript(cutOnceStatus, 'done');
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Calculator');
      await page.waitForFunction(() => document.getElementById('status')!.textContent!.includes('could not follow'));
      expect(await page.textContent('#status')).toMatch(/^done · request chatcmpl-\S+ · the timeline could not follow this request \(events WebSocket closed: 1006\)$/);
    });
  }, 90_000);

  it('keeps "stopped" after Stop', async () => {
    await suite.withPage(async (page) => {
      await page.addInitScript(cutOnceStatus, 'stopped');
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('#examples button:text-is("Python: sine wave")');
      await page.click('#send');
      await page.waitForFunction(() => (document.querySelector('.turn.assistant .content')?.textContent ?? '').length > 0);
      await page.click('#stop');
      await page.waitForFunction(() => document.getElementById('status')!.textContent!.includes('could not follow'));
      expect(await page.textContent('#status')).toBe('stopped · the timeline could not follow this request (events WebSocket closed: 1006)');
    });
  }, 90_000);
});
