import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { eventually, startTestConveyor } from '../support/conveyor-fixture.ts';
import { modelsListed, openPlayground, runExample } from '../support/playground-page.ts';

/** A bar's `start–end s` title as numbers. */
function interval(title: string): { start: number; end: number } {
  const [start, end] = title.replace(' s', '').split('–').map(Number);
  return { start: start!, end: end! };
}

/** The timeline's rows once the server's request-end has been drawn: label → interval. */
async function timelineRows(page: Page): Promise<Map<string, { start: number; end: number }>> {
  await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
  const rows = await page.$$eval('#timeline .row', (rows) => rows.map((r) => [r.querySelector('.label')!.textContent!, (r.querySelector('.bar') as HTMLElement).title] as const));
  return new Map(rows.map(([label, title]) => [label.replace(/ · call_\w+$/, ''), interval(title)]));
}

/** The inline background of the python call's bar ('' when it is the plain tool colour). */
const pythonBarBackground = (page: Page) =>
  page.$$eval('#timeline .row', (rows) => (rows.find((r) => r.querySelector('.label')!.textContent!.startsWith('python'))!.querySelector('.bar') as HTMLElement).style.background);

type FrameCounter = { perFrame: number[]; bump: (n?: number) => void };

/**
 * Counts, per animation frame, what `hook` (an init script, run before the page's own) adds with
 * `window.bump(n)`; `framesCounted` reads the counts back.
 */
async function countPerFrame(page: Page, hook: () => void): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as FrameCounter;
    let count = 0;
    w.perFrame = [];
    w.bump = (n = 1) => void (count += n);
    const tick = () => {
      w.perFrame.push(count);
      count = 0;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await page.addInitScript(hook);
}

const framesCounted = (page: Page) => page.evaluate(() => (window as unknown as FrameCounter).perFrame);

async function askSineWave(page: Page): Promise<void> {
  await page.click('text=Python: sine wave');
  await page.click('#send');
  await page.waitForSelector('.turn.assistant.finished', { timeout: 60_000 });
}

/**
 * Round 1 writes a script of 120 statements; round 2 quotes its output. Sequentially (partial
 * execution off) they all run once the decode ends: 120 `lines N-N` events in a burst, many a frame.
 */
const STATEMENTS_SCENARIO = {
  name: 'statements',
  rules: [
    {
      when: { lastUser: 'many statements', round: 1, lastRole: 'user' as const },
      reply: ['```python', ...Array.from({ length: 119 }, (_, i) => `v${i} = ${i}`), 'print(v118)', '```'].join('\n'),
    },
    { when: { lastUser: 'many statements', round: 2, lastRole: 'tool' as const }, reply: 'It printed {{tool_output_last_line}}' },
  ],
};

describeInBrowser('the playground page in a real browser (Chromium)', () => {
  const suite = browserAndConveyor();

  it('streams an answer whose Python ran while it was written, and draws the tool bar inside the decode', async () => {
    await suite.withPage(async (page) => {
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
      await openPlayground(page, suite.conveyor.gateway.url);
      await askSineWave(page);
      // Round 2 quotes the script's output; the events list had it from the tool, live.
      expect(await page.textContent('.turn.assistant .content')).toContain('samples=13 peak=1.000');
      expect(await page.$$eval('#events li', (items) => items.map((i) => i.textContent))).toContainEqual(expect.stringContaining('python stdout: samples=13 peak=1.000'));
      const rows = await timelineRows(page);
      expect([...rows.keys()]).toEqual(['round 1 · decode', 'python', 'round 2 · decode']);
      // Partial execution: the tool started long before round 1's decode ended.
      expect(rows.get('python')!.start).toBeLessThan(rows.get('round 1 · decode')!.end);
      // It opened when the fence did and waited for the first statement: that wait is drawn pale.
      expect(await pythonBarBackground(page)).toMatch(/^linear-gradient\(to right, var\(--tool-idle\) [\d.]+%, var\(--tool\) [\d.]+%\)$/);
      expect(await page.textContent('#stats')).toMatch(/\d+ prompt \+ \d+ completion tokens · tool time [\d.]+ s, [\d.]+ s of it during the decode/);

      // A follow-up carries the tool round in its history: the call, its output, then the answer.
      const followUp = page.waitForRequest((req) => req.method() === 'POST' && req.url().endsWith('/v1/chat/completions'));
      await page.fill('#prompt', 'Thanks! What was the peak?');
      await page.click('#send');
      const history = ((await followUp).postDataJSON() as { messages: Array<{ role: string; content: string | null; tool_calls?: Array<{ function: { name: string } }> }> }).messages;
      expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
      expect(history[1]!.tool_calls!.map((c) => c.function.name)).toEqual(['python']);
      expect(history[2]!.content).toContain('samples=13 peak=1.000');
      expect(history[3]!.content).toMatch(/^The script ran\./);
      await page.waitForSelector('.turn.assistant.finished >> nth=1', { timeout: 60_000 });

      // The sequential baseline, same page: the tool starts once the decode has ended.
      await page.uncheck('#partial');
      await page.click('#clear');
      await askSineWave(page);
      const baseline = await timelineRows(page);
      expect(baseline.get('python')!.start).toBeGreaterThanOrEqual(baseline.get('round 1 · decode')!.end);
      // Sequentially it had every statement when it started: no wait to draw.
      expect(await pythonBarBackground(page)).toBe('');
      expect(await page.textContent('.turn.assistant .content')).toContain('samples=13 peak=1.000');
      expect(errors).toEqual([]);
    });
  }, 90_000);

  it('Stop cancels the request at the gateway: the decode is aborted and the page says stopped', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('text=Python: sine wave');
      await page.click('#send');
      await page.waitForFunction(() => (document.querySelector('.turn.assistant .content')?.textContent ?? '').length > 0);
      await page.click('#stop');
      await page.waitForSelector('.turn.assistant.finished');
      expect(await page.textContent('#status')).toBe('stopped');
      // The question stays on the page, marked: the next one is sent without it. Part of its answer
      // had come: before, the note said "it got no answer" all the same.
      expect(await page.textContent('.turn.user.left-out .note')).toBe('left out of the conversation: its answer was cut short');
      const id = await page.getAttribute('.turn.assistant', 'data-request-id');
      // The gateway hears of it when the connection closes, a moment after the page.
      type Events = Array<{ type: string; detail?: string }>;
      const events = async (): Promise<Events> => (await (await fetch(`${suite.conveyor.gateway.url}/v1/requests/${id}/timeline`)).json()).events;
      await eventually(async () => (await events()).some((e) => e.type === 'request-end'), 'the stopped request ends at the gateway');
      expect(await events()).toContainEqual(expect.objectContaining({ type: 'abort', detail: 'client aborted' }));
      expect((await events()).filter((e) => e.type === 'round-start')).toHaveLength(1);
    });
  }, 90_000);

  it('takes a stream cut before its [DONE] for an error, its answer cut short: says so and leaves the turn out of the next request', async () => {
    await suite.withPage(async (page) => {
      const sent: Array<{ messages: Array<{ role: string; content: string }> }> = [];
      let cut = true;
      // The gateway's real answer, its connection dropped a third of the way in (as a proxy's timeout leaves it).
      await page.route('**/v1/chat/completions', async (route) => {
        sent.push(JSON.parse(route.request().postData() ?? '{}'));
        const real = await route.fetch();
        const body = await real.text();
        await route.fulfill({ response: real, body: cut ? body.slice(0, body.indexOf('\n\n', body.length / 3) + 2) : body });
        cut = false;
      });
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.getByLabel('Your message').fill('Say hello.');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished');
      expect(await page.textContent('#status')).toMatch(/^error: the stream ended before \[DONE\]/);
      expect(await page.textContent('.turn.assistant .content')).not.toBe('');
      expect(await page.textContent('.turn.user.left-out .note')).toBe('left out of the conversation: its answer was cut short');
      await page.getByLabel('Your message').fill('Again.');
      await page.click('#send');
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('done'));
      expect(sent[1]!.messages).toEqual([{ role: 'user', content: 'Again.' }]);
      // The whole answer is told once, to screen readers, through its own live region.
      expect(await page.textContent('#announcer')).toBe(await page.textContent('.turn.assistant:last-of-type .content'));
    });
  }, 90_000);

  it('says why when the model list cannot be fetched', async () => {
    await suite.withPage(async (page) => {
      await page.route('**/v1/models', (route) => route.abort('connectionrefused'));
      await page.goto(`${suite.conveyor.gateway.url}/`);
      await page.waitForFunction(() => document.getElementById('status')?.textContent !== '');
      expect(await page.textContent('#status')).toMatch(/^GET \/v1\/models failed: /);
    });
  }, 90_000);

  it('New chat during a request empties the timeline, and the stopped request does not draw into it again', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('text=Python: sine wave');
      await page.click('#send');
      await page.waitForFunction(() => document.querySelectorAll('#timeline .row').length >= 2);
      await page.click('#clear');
      await page.waitForSelector('#send:not([disabled])');
      // The old run's frames went on for seconds (waiting for a request-end that never came).
      await page.waitForTimeout(800);
      expect(await page.$$('#timeline .row')).toHaveLength(0);
      expect(await page.textContent('#stats')).toBe('');
      expect(await page.textContent('#status')).toBe('');
    });
  }, 90_000);

  it('stops the request at the gateway when the page fails to read its stream', async () => {
    await suite.withPage(async (page) => {
      // The page's reading breaks on the answer's fifth text chunk.
      await page.addInitScript(() => {
        const parse = JSON.parse;
        let deltas = 0;
        JSON.parse = ((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
          if (typeof text === 'string' && text.includes('"delta":{"content"') && ++deltas === 5) throw new SyntaxError('unreadable chunk');
          return parse(text, reviver);
        }) as typeof JSON.parse;
      });
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('text=Python: sine wave');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished');
      expect(await page.textContent('#status')).toBe('error: unreadable chunk');
      const id = await page.getAttribute('.turn.assistant', 'data-request-id');
      type Events = Array<{ type: string; detail?: string }>;
      const events = async (): Promise<Events> => (await (await fetch(`${suite.conveyor.gateway.url}/v1/requests/${id}/timeline`)).json()).events;
      await eventually(async () => (await events()).some((e) => e.type === 'request-end'), 'the abandoned request ends at the gateway');
      expect(await events()).toContainEqual(expect.objectContaining({ type: 'abort', detail: 'client aborted' }));
    });
  }, 90_000);

  it('lays the answer out at most once a frame, not once a token', async () => {
    await suite.withPage(async (page) => {
      // Per animation frame: how many times the answer's text was replaced since the frame before.
      await countPerFrame(page, () => {
        const { bump } = window as unknown as FrameCounter;
        new MutationObserver((records) => bump(records.filter((r) => (r.target as Element).closest?.('.turn.assistant .content')).length)).observe(document, {
          childList: true,
          subtree: true,
        });
      });
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Database');
      expect(await page.textContent('.turn.assistant .content')).toContain('Ada Lovelace');
      const perFrame = await framesCounted(page);
      expect(perFrame.some((n) => n > 0), 'the hook counted something').toBe(true);
      // The last delta may land after a frame's render and be put in by the run's end: one such frame at most.
      expect(perFrame.filter((n) => n > 1).length).toBeLessThanOrEqual(1);
    });
  }, 90_000);

  it('draws the timeline with a key that a WebSocket subprotocol cannot carry (base64: / + =)', async () => {
    const key = 'pg/key+base64==';
    const keyed = await startTestConveyor({ gateway: { apiKeys: [key] } });
    const page = await suite.browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await page.goto(`${keyed.gateway.url}/`);
      await page.fill('#key', key);
      await page.press('#key', 'Enter');
      await modelsListed(page);
      await runExample(page, 'Calculator');
      expect(await page.textContent('.turn.assistant .content')).toContain('140200');
      expect(await page.textContent('#status')).toMatch(/^done/);
      expect([...(await timelineRows(page)).keys()]).toEqual(['round 1 · decode', 'calculator', 'round 2 · decode']);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      await keyed.close();
    }
  }, 90_000);

  it('still says the timeline could not follow a request once its answer is done', async () => {
    await suite.withPage(async (page) => {
      // A WebSocket that fails as a refused handshake does: an error event, no message.
      await page.addInitScript(() => {
        window.WebSocket = class {
          onerror: ((e: Event) => void) | null = null;
          onmessage: ((e: MessageEvent) => void) | null = null;
          constructor() {
            setTimeout(() => this.onerror?.(new Event('error')), 0);
          }
          close(): void {}
        } as unknown as typeof WebSocket;
      });
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Calculator');
      expect(await page.textContent('.turn.assistant .content')).toContain('140200');
      expect(await page.textContent('#status')).toMatch(/^done · request chatcmpl-\S+ · the timeline could not follow this request \(events WebSocket refused\)$/);
      expect(await page.getAttribute('#status', 'class')).toContain('error');
    });
  }, 90_000);

  it('shows a request the gateway refused as an error, with no timeline left counting', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.$eval('#model', (select) => select.append(new Option('no-such-model', 'no-such-model', true, true)));
      await page.fill('#prompt', 'hello');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished');
      expect(await page.textContent('#status')).toMatch(/^error: /);
      // Frames went on for seconds after the refusal, showing "elapsed 3.01 s · 0 rounds".
      await page.waitForTimeout(500);
      expect(await page.textContent('#stats')).toBe('');
      expect(await page.$$('#timeline .row')).toHaveLength(0);
    });
  }, 90_000);

  it('shows a reasoning model\'s thinking apart from its answer, as text, and sends only the answer back as history', async () => {
    // qwen3 is read as a <think> model: its thinking streams as delta.reasoning_content.
    const thinking = await startTestConveyor({
      sim: { modelName: 'qwen3-8b-sim', scenarios: [{ name: 'think', rules: [{ when: { lastUser: 'think first' }, reply: '<think>Let me weigh <b>both</b> sides.</think>The answer is 42.' }] }] },
    });
    const page = await suite.browser.newPage();
    try {
      await page.goto(`${thinking.gateway.url}/`);
      await page.waitForSelector('#model option:text-is("qwen3-8b-sim")', { state: 'attached' });
      await page.fill('#prompt', 'Please think first.');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished', { timeout: 60_000 });
      // Before, the thinking went nowhere: the bubble stayed empty for as long as the model reasoned.
      expect(await page.textContent('.turn.assistant .reasoning')).toBe('Let me weigh <b>both</b> sides.');
      expect(await page.isVisible('.turn.assistant .reasoning')).toBe(true);
      expect(await page.$$('.turn.assistant b')).toHaveLength(0);
      expect(await page.textContent('.turn.assistant .content')).toBe('The answer is 42.');
      const followUp = page.waitForRequest((req) => req.method() === 'POST' && req.url().endsWith('/v1/chat/completions'));
      await page.fill('#prompt', 'And then?');
      await page.click('#send');
      const history = ((await followUp).postDataJSON() as { messages: unknown[] }).messages;
      expect(history).toEqual([
        { role: 'user', content: 'Please think first.' },
        { role: 'assistant', content: 'The answer is 42.' },
        { role: 'user', content: 'And then?' },
      ]);
      await page.waitForSelector('.turn.assistant.finished >> nth=1', { timeout: 60_000 });
      // An answer without thinking shows no empty thinking box.
      expect(await page.isVisible('.turn.assistant >> nth=1 >> .reasoning')).toBe(false);
    } finally {
      await page.close();
      await thinking.close();
    }
  }, 90_000);

  it('shows no timeline left counting when no answer came at all (the connection failed, or Stop before it began)', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.route('**/v1/chat/completions', (route) => route.abort('connectionreset'));
      await page.fill('#prompt', 'hello');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished');
      expect(await page.textContent('#status')).toMatch(/^error: /);
      // Frames went on for 3 s after the failure and left "elapsed 3.01 s · 0 rounds" behind.
      await page.waitForTimeout(500);
      expect(await page.textContent('#stats')).toBe('');
      // Stopped while the request is still waiting for its answer's first byte.
      await page.unroute('**/v1/chat/completions');
      await page.route('**/v1/chat/completions', () => {});
      await page.fill('#prompt', 'hello again');
      await page.click('#send');
      await page.waitForFunction(() => document.getElementById('stats')?.textContent?.startsWith('elapsed'));
      await page.click('#stop');
      await page.waitForSelector('.turn.assistant.finished >> nth=1');
      expect(await page.textContent('#status')).toBe('stopped');
      await page.waitForTimeout(500);
      expect(await page.textContent('#stats')).toBe('');
      expect(await page.$$('#timeline .row')).toHaveLength(0);
    });
  }, 90_000);

  it('measures the events box once a frame, not once an event (each measure forced a layout)', async () => {
    const page = await suite.browser.newPage();
    // Per animation frame: how many times the events box's scrollHeight was read since the frame before.
    await countPerFrame(page, () => {
      const { bump } = window as unknown as FrameCounter;
      const get = Object.getOwnPropertyDescriptor(Element.prototype, 'scrollHeight')!.get!;
      Object.defineProperty(Element.prototype, 'scrollHeight', {
        get(this: Element) {
          if (this.tagName === 'ASIDE') bump();
          return get.call(this);
        },
      });
    });
    const statements = await startTestConveyor({ sim: { scenarios: [STATEMENTS_SCENARIO] } });
    try {
      await openPlayground(page, statements.gateway.url);
      await page.uncheck('#partial');
      await page.fill('#prompt', 'many statements');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished', { timeout: 60_000 });
      expect(await page.textContent('.turn.assistant .content')).toContain('It printed 118');
      expect(await page.$$eval('#events li', (items) => items.filter((i) => /python: lines \d+-\d+$/.test(i.textContent!)).length)).toBe(120);
      const perFrame = await framesCounted(page);
      expect(perFrame.some((n) => n > 0), 'the hook counted something').toBe(true);
      // Two a frame: whether the reader is at the bottom, and where the bottom now is. The run's
      // end puts in what came after the last frame: one frame more at most.
      expect(perFrame.filter((n) => n > 2).length).toBeLessThanOrEqual(1);
    } finally {
      await page.close();
      await statements.close();
    }
  }, 90_000);

  it('asks for the API key when the gateway needs one, then uses it for the chat and the events socket', async () => {
    const keyed = await startTestConveyor({ gateway: { apiKeys: ['pg-key'] } });
    const page = await suite.browser.newPage();
    try {
      await page.goto(`${keyed.gateway.url}/`);
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.includes('enter the API key'));
      await page.fill('#key', 'pg-key');
      await page.press('#key', 'Enter');
      await modelsListed(page);
      await askSineWave(page);
      expect(await page.textContent('.turn.assistant .content')).toContain('samples=13 peak=1.000');
      // The timeline came over the events WebSocket, authenticated by the key subprotocol.
      expect([...(await timelineRows(page)).keys()]).toContain('python');
    } finally {
      await page.close();
      await keyed.close();
    }
  }, 90_000);
});
