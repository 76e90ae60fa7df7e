import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { openPlayground, runExample } from '../support/playground-page.ts';

// The playground's timeline and events list where the server's record does not end the plain
// way: an events socket closed early, calls given up while decoded, a list too long to keep.

/** Round 1 writes a Python block longer than the token limit the test sets, so the limit cuts it. */
const TRUNCATED_SCENARIO = {
  name: 'truncated',
  rules: [{ when: { lastUser: 'cut python' }, reply: ['```python', ...Array.from({ length: 40 }, (_, i) => `x${i} = ${i}`), 'print(x39)', '```'].join('\n') }],
};

/** Round 1 calls a tool no one offered (Mistral's format, the simulator's model); round 2 answers the refusal. */
const UNDECLARED_SCENARIO = {
  name: 'undeclared',
  rules: [
    { when: { lastUser: 'weather', round: 1, lastRole: 'user' as const }, reply: '[TOOL_CALLS][{"name": "weather", "arguments": {"city": "Paris"}}]' },
    { when: { lastUser: 'weather', round: 2, lastRole: 'tool' as const }, reply: 'There is no weather tool here.' },
  ],
};

async function ask(page: Page, prompt: string, nth = 0): Promise<void> {
  await page.fill('#prompt', prompt);
  await page.click('#send');
  await page.waitForSelector(`.turn.assistant.finished >> nth=${nth}`, { timeout: 60_000 });
}

/** Waits `n` animation frames of the page. */
const frames = (page: Page, n: number) =>
  page.evaluate(
    (n) =>
      new Promise<void>((resolve) => {
        const next = () => (--n <= 0 ? resolve() : requestAnimationFrame(next));
        requestAnimationFrame(next);
      }),
    n,
  );

/** The timeline's row labels, once the server's request-end has been drawn. */
async function rowLabels(page: Page): Promise<string[]> {
  await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
  return page.$$eval('#timeline .row .label', (labels) => labels.map((l) => l.textContent!));
}

describeInBrowser('the playground timeline in a real browser (Chromium)', () => {
  const suite = browserAndConveyor({ sim: { scenarios: [TRUNCATED_SCENARIO, UNDECLARED_SCENARIO] } });

  it('says the timeline stopped following when the server closes its events socket before request-end (1008, follower too slow)', async () => {
    await suite.withPage(async (page) => {
      const start: TimelineEvent = { t: 0, type: 'request-start' };
      // The gateway's own close of a follower that reads too slowly: one event, then 1008.
      await page.addInitScript((event) => {
        window.WebSocket = class {
          onmessage: ((e: MessageEvent) => void) | null = null;
          onclose: ((e: CloseEvent) => void) | null = null;
          onerror: ((e: Event) => void) | null = null;
          constructor() {
            setTimeout(() => {
              this.onmessage?.(new MessageEvent('message', { data: JSON.stringify(event) }));
              this.onclose?.(new CloseEvent('close', { code: 1008, reason: 'follower too slow: more than 4 MiB of events unread', wasClean: true }));
            }, 0);
          }
          close(): void {}
        } as unknown as typeof WebSocket;
      }, start);
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Calculator');
      expect(await page.textContent('.turn.assistant .content')).toContain('140200');
      // Before, the bars just stopped and the run read "done · … its timeline: …".
      expect(await page.textContent('#status')).toMatch(
        /^done · request chatcmpl-\S+ · the timeline could not follow this request \(events WebSocket closed: 1008 follower too slow: more than 4 MiB of events unread\)$/,
      );
      expect(await page.getAttribute('#status', 'class')).toContain('error');
    });
  }, 90_000);

  it('says nothing of an events socket the server closes after request-end, or one the page closes itself (Stop, New chat)', async () => {
    await suite.withPage(async (page) => {
      // The real socket, each close event's code noted.
      await page.addInitScript(() => {
        const Real = window.WebSocket;
        const closes: number[] = ((window as unknown as { closes: number[] }).closes = []);
        window.WebSocket = class extends Real {
          constructor(url: string | URL, protocols?: string | string[]) {
            super(url, protocols);
            this.addEventListener('close', (e) => closes.push(e.code));
          }
        };
      });
      const closed = (n: number) => page.waitForFunction((n) => (window as unknown as { closes: number[] }).closes.length === n, n);
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('#examples button:text-is("Calculator")');
      await ask(page, 'What is 200*701?');
      await closed(1);
      expect(await page.textContent('#status')).toMatch(/^done · request (\S+) · its timeline: \/v1\/requests\/\1\/timeline$/);
      expect(await page.$eval('#status', (status) => status.classList.contains('error'))).toBe(false);

      // Stop: the gateway ends the request, sends its request-end and closes.
      await page.click('text=Python: sine wave');
      await page.click('#send');
      await page.waitForFunction(() => (document.querySelector('.turn.assistant:last-of-type .content')?.textContent ?? '').length > 0);
      await page.click('#stop');
      await page.waitForSelector('.turn.assistant.finished >> nth=1');
      await closed(2);
      expect(await page.textContent('#status')).toBe('stopped');

      // New chat: the page closes the socket before any request-end.
      await page.click('text=Python: sine wave');
      await page.click('#send');
      await page.waitForFunction(() => document.querySelectorAll('#timeline .row').length >= 2);
      await page.click('#clear');
      await closed(3);
      await page.waitForSelector('#send:not([disabled])');
      expect(await page.evaluate(() => (window as unknown as { closes: number[] }).closes)).toEqual([1000, 1000, 1005]);
      expect(await page.textContent('#status')).toBe('');
    });
  }, 90_000);

  it('stops the clock where the timeline lost the request, not seconds after the answer ends', async () => {
    await suite.withPage(async (page) => {
      await page.addInitScript(() => {
        window.WebSocket = class {
          onmessage: ((e: MessageEvent) => void) | null = null;
          onclose: ((e: CloseEvent) => void) | null = null;
          onerror: ((e: Event) => void) | null = null;
          constructor() {
            setTimeout(() => this.onclose?.(new CloseEvent('close', { code: 1006, wasClean: false })), 0);
          }
          close(): void {}
        } as unknown as typeof WebSocket;
      });
      // The clock's part of the stats (the usage joins them when the stream ends).
      const clock = async () => /^(?:elapsed|lost at|total) \d+\.\d\d s/.exec((await page.textContent('#stats')) ?? '')?.[0];
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('#examples button:text-is("Calculator")');
      await page.click('#send');
      // Lost while the answer still streams: the clock says where, and stays there.
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('the timeline could not follow'));
      await frames(page, 2);
      const lost = await clock();
      expect(lost).toMatch(/^lost at /);
      await page.waitForSelector('.turn.assistant.finished', { timeout: 60_000 });
      expect(await page.textContent('.turn.assistant .content')).toContain('140200');
      // Before: "elapsed" went on counting through the answer and for 3 s after it.
      await frames(page, 10);
      expect(await clock()).toBe(lost);
    });
  }, 90_000);

  it('patches the timeline in place while a request runs: a row once drawn stays the same node, so a screen reader keeps its place', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      // Every node the request's frames take out of the timeline, and its first row as first drawn.
      await page.evaluate(() => {
        const seen = window as unknown as { removed: string[]; firstRow?: Element };
        const panel = document.getElementById('timeline')!;
        seen.removed = [];
        new MutationObserver((records) => {
          for (const record of records) for (const node of record.removedNodes) seen.removed.push(node.nodeName);
          seen.firstRow ??= panel.querySelector('.row') ?? undefined;
        }).observe(panel, { childList: true, subtree: true });
      });
      await runExample(page, 'Python: sine wave');
      expect(await rowLabels(page)).toEqual(['round 1 · decode', expect.stringMatching(/^python · \S+$/), 'round 2 · decode']);
      const seen = await page.evaluate(() => {
        const { removed, firstRow } = window as unknown as { removed: string[]; firstRow?: Element };
        return { removed, same: firstRow !== undefined && firstRow === document.querySelector('#timeline .row') };
      });
      // Before: every row (and its texts) replaced at every frame, hundreds of removals in a run.
      expect(seen).toEqual({ removed: [], same: true });
      // The rows still say what they said: the bars' times, in text as in their titles.
      for (const [text, title] of await page.$$eval('#timeline .row', (rows) => rows.map((row) => [row.textContent!, (row.querySelector('.bar') as HTMLElement).title]))) {
        const [from, to] = title!.split(/–| s/);
        expect(text!.endsWith(`from ${from} s to ${to} s`)).toBe(true);
      }
    });
  }, 90_000);

  it('labels a tool the Stop button cut as aborted, the gateway\'s word for it, not failed', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.click('text=Python: sine wave');
      await page.click('#send');
      // Partial execution opened python with the fence; round 1 is still writing its script.
      await page.waitForSelector('#timeline .row .label:text-matches("^python · ")');
      await page.click('#stop');
      await page.waitForSelector('.turn.assistant.finished');
      expect(await page.textContent('#status')).toBe('stopped');
      // Before: "failed · python · call_…", in the colour of a tool that went wrong; and the
      // decode Stop cut ran on to the end in decode blue, as if it had finished.
      expect(await rowLabels(page)).toEqual(['aborted · round 1 · decode', expect.stringMatching(/^aborted · python · \S+$/)]);
      expect(await page.$$eval('#timeline .bar', (bars) => bars.map((b) => b.className))).toEqual(['bar aborted', 'bar aborted']);
      expect(await page.textContent('#stats')).toMatch(/ · total \d+\.\d\d s \(stopped\) · /);
      const id = await page.getAttribute('.turn.assistant', 'data-request-id');
      const { events } = (await (await fetch(`${suite.conveyor.gateway.url}/v1/requests/${id}/timeline`)).json()) as { events: TimelineEvent[] };
      expect(events.filter((e) => e.type === 'tool-end').map((e) => e.detail)).toEqual(['aborted']);
    });
  }, 90_000);

  it('labels a decode the upstream cut as failed, and says how the request ended', async () => {
    // An upstream that writes a few words of the simulator's model, then drops the connection.
    const upstream = createServer((req, res) => {
      if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: SIM_MODEL, object: 'model' }] }));
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const word of ['Hello', ' there', ' and']) {
          res.write(`data: ${JSON.stringify({ id: 'up', object: 'chat.completion.chunk', created: 1, model: SIM_MODEL, choices: [{ index: 0, delta: { content: word }, finish_reason: null }] })}\n\n`);
        }
        setTimeout(() => res.socket?.destroy(), 200);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const cutting = await startTestConveyor({ gateway: { upstream: { baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` } } });
    try {
      await suite.withPage(async (page) => {
        await openPlayground(page, cutting.gateway.url);
        await ask(page, 'hello');
        expect(await page.textContent('#status')).toMatch(/^error: /);
        // Before: "round 1 · decode" in decode blue and "total 0.21 s", the request read as answered.
        expect(await rowLabels(page)).toEqual(['failed · round 1 · decode']);
        expect(await page.$$eval('#timeline .bar', (bars) => bars.map((b) => b.className))).toEqual(['bar failed']);
        expect(await page.textContent('#stats')).toMatch(/ · total \d+\.\d\d s \(failed: upstream_\w+\) · /);
      });
    } finally {
      await cutting.close();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    }
  }, 90_000);

  it('labels a call the token limit cut as malformed, with its tool, whether or not its tool had opened', async () => {
    await suite.withPage(async (page) => {
      // A token limit the page has no field for, put in its request.
      await page.route('**/v1/chat/completions', (route) => route.continue({ postData: JSON.stringify({ ...route.request().postDataJSON(), max_tokens: 40 }) }));
      await openPlayground(page, suite.conveyor.gateway.url);
      // Sequentially the tool opens only once the decode ends, and a cut call never opens it.
      await page.uncheck('#partial');
      await ask(page, 'cut python');
      // Before: "rejected · call_…", no tool named, though nothing rejected it.
      expect(await rowLabels(page)).toEqual(['round 1 · decode', expect.stringMatching(/^malformed · python · \S+$/)]);
      // Partial execution opened python with the block; it was cut all the same (before: "python · call_… (failed)").
      await page.check('#partial');
      await page.click('#clear');
      await ask(page, 'cut python');
      expect(await rowLabels(page)).toEqual(['round 1 · decode', expect.stringMatching(/^malformed · python · \S+$/)]);
    });
  }, 90_000);

  it('names the tool of a call refused for a name no tool has', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await ask(page, 'What is the weather in Paris?');
      expect(await page.textContent('.turn.assistant .content')).toBe('There is no weather tool here.');
      // Before: "rejected · call_…", which tool the model wanted nowhere on the page.
      expect(await rowLabels(page)).toEqual(['round 1 · decode', expect.stringMatching(/^rejected · weather · \S+$/), 'round 2 · decode']);
    });
  }, 90_000);

  it('keeps the latest 2,000 tool events, under a line that counts the rest', async () => {
    await suite.withPage(async (page) => {
      const LINES = 2_100;
      // The gateway's real answer, with the output chunks of a tool that printed 2,100 lines before its [DONE].
      await page.route('**/v1/chat/completions', async (route) => {
        const real = await route.fetch();
        const body = await real.text();
        const first = JSON.parse(/^data: (.*)$/m.exec(body)![1]!) as { id: string; object: string; created: number; model: string };
        const output = Array.from({ length: LINES }, (_, i) => {
          const chunk = { id: first.id, object: first.object, created: first.created, model: first.model, choices: [], conveyor: { type: 'tool_call.output', call_id: 'call_out', name: 'python', stream: 'stdout', text: `line ${i}\n` } };
          return `data: ${JSON.stringify(chunk)}\n\n`;
        });
        const done = body.lastIndexOf('data: [DONE]');
        await route.fulfill({ response: real, body: body.slice(0, done) + output.join('') + body.slice(done) });
      });
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Calculator');
      const items = await page.$$eval('#events li', (items) => items.map((i) => i.textContent!));
      expect(items).toHaveLength(2_001);
      expect(Number(/^… (\d+) earlier events not shown$/.exec(items[0]!)?.[1])).toBeGreaterThanOrEqual(LINES - 2_000);
      expect(items.at(-1)).toMatch(/python stdout: line 2099$/);

      // Frame after frame, and events held while no frame came (a background tab): the count goes on.
      // A string, not a function: the test runner's transform would rewrite a function's import().
      const list = await page.evaluate(`(async () => {
        const { EventsList } = await import('/playground/events-list.js');
        const events = new EventsList(document.getElementById('events'), (at) => at / 1000);
        const batch = (from, n) => { for (let i = 0; i < n; i++) events.add('e' + (from + i)); };
        batch(0, 1500);
        events.render();
        batch(1500, 1500);
        events.render();
        const second = document.getElementById('events').firstElementChild.textContent;
        batch(3000, 5000);
        events.render();
        const items = [...document.querySelectorAll('#events li')].map((i) => i.textContent);
        return { second, count: items.length, first: items[0], next: items[1], last: items.at(-1) };
      })()`);
      expect(list).toEqual({
        second: '… 1000 earlier events not shown',
        count: 2_001,
        first: '… 6000 earlier events not shown',
        next: expect.stringMatching(/e6000$/),
        last: expect.stringMatching(/e7999$/),
      });
    });
  }, 90_000);
});
