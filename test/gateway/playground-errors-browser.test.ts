import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { startTestConveyor } from '../support/conveyor-fixture.ts';
import { modelsListed, openPlayground, runExample } from '../support/playground-page.ts';

// The playground where a request gets no answer (no model listed, refused, stopped), in a
// phone-wide window, by keyboard, and with more tool events than its box holds.

/** A loopback port nothing listens on: an upstream that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The chat requests the page sends. */
function chatRequests(page: Page): string[] {
  const sent: string[] = [];
  page.on('request', (req) => void (req.method() === 'POST' && req.url().endsWith('/v1/chat/completions') && sent.push(req.postData() ?? '')));
  return sent;
}

describeInBrowser('the playground without an answer, narrow, by keyboard (Chromium)', () => {
  const suite = browserAndConveyor();

  it('sends nothing while no model is listed (the upstream down): says why and keeps the prompt', async () => {
    const down = await startTestConveyor({ gateway: { upstream: { baseUrl: `http://127.0.0.1:${await closedPort()}/v1` } } });
    const page = await suite.browser.newPage();
    const sent = chatRequests(page);
    try {
      await page.goto(`${down.gateway.url}/`);
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('GET /v1/models'));
      await page.fill('#prompt', 'hello');
      await page.click('#send');
      // The list is asked for again, and still fails: before, the request went with no model and
      // came back "model: Too small: expected string…", the prompt gone from its box.
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('not sent: GET /v1/models'));
      expect(await page.textContent('#status')).toMatch(/^not sent: GET \/v1\/models: .*upstream/);
      expect(await page.inputValue('#prompt')).toBe('hello');
      expect(await page.$$('.turn')).toHaveLength(0);
      expect(sent).toEqual([]);
    } finally {
      await page.close();
      await down.close();
    }
  }, 90_000);

  it('lists the models again on Send when they failed to load, then sends', async () => {
    await suite.withPage(async (page) => {
      const sent = chatRequests(page);
      await page.route('**/v1/models', (route) => route.abort('connectionrefused'));
      await page.goto(`${suite.conveyor.gateway.url}/`);
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('GET /v1/models failed'));
      await page.unroute('**/v1/models');
      await page.fill('#prompt', 'Say hello.');
      await page.click('#send');
      await modelsListed(page);
      await page.waitForSelector('.turn.assistant.finished', { timeout: 60_000 });
      expect(await page.textContent('#status')).toMatch(/^done · /);
      expect(sent.map((body) => JSON.parse(body).model)).toEqual([await page.inputValue('#model')]);
    });
  }, 90_000);

  it('says in the answer\'s bubble why it has none: the error, or stopped (not in the colour of a failure)', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.$eval('#model', (select) => select.append(new Option('no-such-model', 'no-such-model', true, true)));
      await page.fill('#prompt', 'hello');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished');
      // Before: an empty bubble, the reason only in the status line the next request takes over.
      const status = await page.textContent('#status');
      expect(status).toMatch(/^error: /);
      expect(await page.textContent('.turn.assistant .note')).toBe(status);
      expect(await page.getAttribute('.turn.assistant', 'class')).toBe('turn assistant failed finished');
      expect(await page.textContent('#events li:last-child span')).toBe(status);
      // The question, left out of the conversation, is back in the box to send again.
      expect(await page.inputValue('#prompt')).toBe('hello');
      expect(await page.textContent('.turn.user.left-out .note')).toBe('left out of the conversation: it got no answer');

      await page.selectOption('#model', { index: 0 });
      await page.click('text=Python: sine wave');
      await page.click('#send');
      await page.waitForFunction(() => (document.querySelector('.turn.assistant:last-of-type .content')?.textContent ?? '').length > 0);
      await page.click('#stop');
      await page.waitForSelector('.turn.assistant.finished >> nth=1');
      expect(await page.textContent('.turn.assistant:last-of-type .note')).toBe('stopped');
      // Part of this one's answer had come: before, its note said "it got no answer" too.
      expect(await page.textContent('.turn.user >> nth=1 >> .note')).toBe('left out of the conversation: its answer was cut short');
      expect(await page.inputValue('#prompt')).toBe('Plot a sine wave in Python using only the standard library.');
      expect(await page.getAttribute('.turn.assistant:last-of-type', 'class')).toBe('turn assistant stopped finished');
      // Before: the events list ended with the last tool event, as if the answer had run on.
      expect(await page.textContent('#events li:last-child span')).toBe('stopped: the request was cancelled at the gateway');
    });
  }, 90_000);

  it('marks a call recognised and never finished as dropped when Stop cuts the request', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('text=Python: sine wave');
      await page.click('#send');
      // Partial execution: python is recognised with the fence, while round 1 still writes its script.
      await page.waitForSelector('#events li span:text-is("python call recognised")');
      await page.click('#stop');
      await page.waitForSelector('.turn.assistant.finished');
      // Before: the list ended "python call recognised", "stopped: …", as if the call ran on.
      const items = await page.$$eval('#events li span', (spans) => spans.map((s) => s.textContent));
      expect(items).toContain('python call recognised');
      expect(items.slice(-2)).toEqual(['python call dropped: stopped', 'stopped: the request was cancelled at the gateway']);
    });
  }, 90_000);

  it('draws a call Stop cut while it was written sequentially as a dropped bar, as partial execution draws its aborted tool', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      // Sequentially python opens only once round 1's decode ends; Stop comes while it writes the script.
      await page.uncheck('#partial');
      await page.click('text=Python: sine wave');
      await page.click('#send');
      await page.waitForSelector('#events li span:text-is("python call recognised")');
      await page.click('#stop');
      await page.waitForSelector('.turn.assistant.finished');
      await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('(stopped)'));
      // The tool never opened: the server's record has the call begun and no tool-start.
      const id = await page.getAttribute('.turn.assistant', 'data-request-id');
      const { events } = (await (await fetch(`${suite.conveyor.gateway.url}/v1/requests/${id}/timeline`)).json()) as { events: { type: string; callId?: string }[] };
      expect(events.filter((e) => e.type === 'call-start' || e.type === 'tool-start').map((e) => e.type)).toEqual(['call-start']);
      const callId = events.find((e) => e.type === 'call-start')!.callId!;
      // Before: the decode's bar alone, as if the model had never begun the call.
      expect(await page.$$eval('#timeline .row .label', (labels) => labels.map((l) => l.textContent))).toEqual(['aborted · round 1 · decode', `dropped · python · ${callId}`]);
      expect(await page.$$eval('#timeline .bar', (bars) => bars.map((b) => b.className))).toEqual(['bar aborted', 'bar aborted']);
    });
  }, 90_000);

  it('leaves the timeline\'s bars most of a phone-wide row, not a fixed 190px of labels', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Calculator');
      await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
      const widths = await page.$$eval('#timeline .row', (rows) => rows.map((r) => [r.querySelector('.label')!.clientWidth, r.querySelector('.track')!.clientWidth]));
      expect(widths).toHaveLength(3);
      // Before: 190px of labels left 116px for the bars.
      for (const [label, track] of widths) expect(track).toBeGreaterThan(label!);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(380);
    }, { viewport: { width: 380, height: 800 } });
  }, 90_000);

  it("shows the API key field's whole placeholder, at 1280 px and on phones down to 320 px", async () => {
    // Before: 380 px only; at 360 (a common Android width) it read "only if the gateway needs on".
    for (const width of [1280, 380, 360, 320]) {
      await suite.withPage(async (page) => {
        await openPlayground(page, suite.conveyor.gateway.url);
        const [text, room] = await page.$eval('#key', (input) => {
          const style = getComputedStyle(input);
          const context = document.createElement('canvas').getContext('2d')!;
          context.font = style.font;
          const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
          return [context.measureText((input as HTMLInputElement).placeholder).width, input.clientWidth - padding];
        });
        // Before: "only if the gateway need", a password field's default width.
        expect(text).toBeLessThanOrEqual(room);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      }, { viewport: { width, height: 800 } });
    }
  }, 90_000);

  it('puts the prompt right under the conversation on a phone, the tool events and the timeline after it', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      const top = (selector: string) => page.$eval(selector, (e) => e.getBoundingClientRect().top);
      const bottom = (selector: string) => page.$eval(selector, (e) => e.getBoundingClientRect().bottom);
      // Before: below the events box and the timeline, about 1,500 px down.
      expect(await top('#prompt')).toBeGreaterThan(await bottom('#conversation'));
      expect(await top('#prompt')).toBeLessThan(await top('#events'));
      expect(await top('#events')).toBeLessThan(await top('#timeline'));
      expect(await bottom('#ask')).toBeLessThanOrEqual(800);
    }, { viewport: { width: 380, height: 800 } });
    // A wide window keeps its layout: the events beside the conversation, the prompt below both.
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      const box = (selector: string) => page.$eval(selector, (e) => e.getBoundingClientRect().toJSON() as DOMRect);
      expect((await box('#events')).left).toBeGreaterThan((await box('#conversation')).right);
      expect((await box('#prompt')).top).toBeGreaterThan((await box('#timeline')).top);
    }, { viewport: { width: 1280, height: 900 } });
  }, 90_000);

  it('keeps the keyboard on the prompt after Stop, not on the page\'s body', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('text=Python: sine wave');
      await page.press('#prompt', 'Control+Enter');
      await page.waitForFunction(() => (document.querySelector('.turn.assistant .content')?.textContent ?? '').length > 0);
      await page.focus('#stop');
      await page.keyboard.press('Enter');
      await page.waitForSelector('.turn.assistant.finished');
      expect(await page.textContent('#status')).toBe('stopped');
      // Before: the Stop button, disabled under the focus, left it on <body>.
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('prompt');
    });
  }, 90_000);

  it('keeps the keyboard on the prompt after Send, from where Tab reaches Stop', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('text=Python: sine wave');
      await page.focus('#send');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => (document.querySelector('.turn.assistant .content')?.textContent ?? '').length > 0);
      // Before: the Send button, disabled under the focus, left it on <body>.
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('prompt');
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('stop');
      await page.keyboard.press('Enter');
      await page.waitForSelector('.turn.assistant.finished');
      expect(await page.textContent('#status')).toBe('stopped');
    });
  }, 90_000);

  it('greys a left-out question and the notes with text that keeps 4.5:1 contrast (WCAG AA)', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('text=Python: sine wave');
      await page.click('#send');
      await page.waitForFunction(() => (document.querySelector('.turn.assistant .content')?.textContent ?? '').length > 0);
      await page.click('#stop');
      await page.waitForSelector('.turn.assistant.finished');
      const ratios = await page.$$eval('.turn.left-out .content, .turn .note', (texts) =>
        texts.map((text) => {
          const rgb = (color: string) => color.match(/[\d.]+/g)!.map(Number);
          // The text's colour as painted: its alpha and every ancestor's opacity, over the box's white.
          let alpha = rgb(getComputedStyle(text).color)[3] ?? 1;
          for (let e: Element | null = text; e; e = e.parentElement) alpha *= Number(getComputedStyle(e).opacity);
          const painted = rgb(getComputedStyle(text).color).slice(0, 3).map((c) => c * alpha + 255 * (1 - alpha));
          const luminance = (channels: number[]) => {
            const [r, g, b] = channels.map((c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4));
            return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
          };
          return [text.textContent, 1.05 / (luminance(painted) + 0.05)] as const;
        }),
      );
      expect(ratios.map(([text]) => text)).toEqual(['Plot a sine wave in Python using only the standard library.', 'left out of the conversation: its answer was cut short', 'stopped']);
      // Before: 4.48 for the notes (#777), about 4.4 for the question (opacity 0.6).
      for (const [, ratio] of ratios) expect(ratio).toBeGreaterThanOrEqual(4.5);
    });
  }, 90_000);

  it('keeps the tool events\' heading in view when the list scrolls', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Python: sine wave');
      const box = await page.$eval('aside', (aside) => {
        aside.scrollTop = aside.scrollHeight;
        const top = aside.getBoundingClientRect().top;
        return { scrolled: aside.scrollTop, heading: aside.querySelector('h2')!.getBoundingClientRect().top - top };
      });
      expect(box.scrolled).toBeGreaterThan(0);
      // Before: it scrolled away with the first events.
      expect(box.heading).toBeGreaterThanOrEqual(0);
      expect(box.heading).toBeLessThan(20);
    }, { viewport: { width: 1280, height: 900 } });
  }, 90_000);
});
