import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { openPlayground } from '../support/playground-page.ts';

// What the "partial execution" box does was said only in its label's title, a tooltip for a
// mouse: a screen reader said "partial execution, checkbox" and nothing more, so what unticking
// it does (the sequential baseline) was a guess.
describeInBrowser('the playground\'s partial execution box, described (Chromium)', () => {
  const suite = browserAndConveyor();

  it('gives the checkbox its explanation as its accessible description, not only as a tooltip', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      const cdp = await page.context().newCDPSession(page);
      const { root } = await cdp.send('DOM.getDocument');
      const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#partial' });
      const { nodes } = await cdp.send('Accessibility.getPartialAXTree', { nodeId, fetchRelatives: false });
      expect(nodes[0]!.name?.value).toBe('partial execution');
      expect(nodes[0]!.description?.value).toBe('off: tools see nothing until each decode ends (the sequential baseline)');
    });
  }, 90_000);
});
