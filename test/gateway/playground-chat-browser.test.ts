import { expect, it } from 'vitest';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { startTestConveyor } from '../support/conveyor-fixture.ts';
import { modelsListed, openPlayground, runExample } from '../support/playground-page.ts';

// The playground as a chat, turn after turn: where the conversation's box scrolls to, the
// settings a reader changes between turns (the model, the API key), and the history it sends.

/** A tool of the client's own (it has its parameters): the gateway sends its calls back to the client. */
const GET_WEATHER = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** Round 1 calls the client's get_weather (Mistral's format, the simulator's model); the follow-up gets the default reply. */
const CLIENT_TOOL_SCENARIO = {
  name: 'client-tool',
  rules: [{ when: { lastUser: 'weather in Oslo', round: 1, lastRole: 'user' as const }, reply: '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}}]' }],
};

describeInBrowser('the playground conversation, turn after turn (Chromium)', () => {
  const suite = browserAndConveyor({ sim: { scenarios: [CLIENT_TOOL_SCENARIO] } });

  it('sends an answer that only called a client tool back as its tool_calls (content null), each answered as not run', async () => {
    // With the gateway's response.messages on the finish chunk, and without them (a stream that
    // has only OpenAI's fields): the page puts the turn together from the tool_calls deltas.
    for (const gatewayTurns of [true, false]) {
      await suite.withPage(async (page) => {
        const sent: Array<{ messages: unknown[] }> = [];
        // The client's own tool, which the page has no field for, put in its requests.
        await page.route('**/v1/chat/completions', async (route) => {
          const body = { ...route.request().postDataJSON(), tools: [GET_WEATHER] };
          sent.push(body);
          const real = await route.fetch({ postData: JSON.stringify(body) });
          const text = await real.text();
          const openAiOnly = text.replace(/^data: (\{.*\})$/gm, (_, json: string) => {
            const { conveyor, ...chunk } = JSON.parse(json) as { conveyor?: { type: string } };
            return `data: ${JSON.stringify(conveyor?.type === 'response.messages' ? chunk : { ...chunk, conveyor })}`;
          });
          await route.fulfill({ response: real, body: gatewayTurns ? text : openAiOnly });
        });
        await openPlayground(page, suite.conveyor.gateway.url);
        await page.fill('#prompt', 'What is the weather in Oslo?');
        await page.click('#send');
        await page.waitForSelector('.turn.assistant.finished', { timeout: 60_000 });
        expect(await page.$$eval('#events li span', (items) => items.map((i) => i.textContent))).toContain('client tool call: get_weather (not run: the playground runs no client tools)');
        // In the answer's bubble too, which had nothing in it.
        expect(await page.textContent('.turn.assistant .calls')).toBe('called get_weather({"city": "Oslo"}) · not run: the playground runs no client tools');
        expect(await page.isVisible('.turn.assistant .calls')).toBe(true);
        await page.fill('#prompt', 'And tomorrow?');
        await page.click('#send');
        await page.waitForSelector('.turn.assistant.finished >> nth=1', { timeout: 60_000 });
        // An answer of text only has no calls line.
        expect(await page.isVisible('.turn.assistant >> nth=1 >> .calls')).toBe(false);
        const call = (sent[1]!.messages[1] as { tool_calls?: Array<{ id: string }> }).tool_calls?.[0];
        // Before: { role: 'assistant', content: '' } without the gateway's turns; with them, no
        // tool message answered the call, a history OpenAI's API refuses.
        expect(sent[1]!.messages).toEqual([
          { role: 'user', content: 'What is the weather in Oslo?' },
          { role: 'assistant', content: null, tool_calls: [{ id: expect.stringMatching(/\S/), type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } }] },
          { role: 'tool', tool_call_id: call?.id, content: expect.stringMatching(/^Not run: /) },
          { role: 'user', content: 'And tomorrow?' },
        ]);
        expect(await page.textContent('#status')).toMatch(/^done · /);
      });
    }
  }, 120_000);

  it('scrolls to a question just sent, even when the reader had scrolled up to an earlier answer', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Python: sine wave');
      // The answer is longer than its box: the reader goes back to its start.
      expect(await page.$eval('#conversation', (box) => box.scrollHeight > box.clientHeight)).toBe(true);
      await page.$eval('#conversation', (box) => (box.scrollTop = 0));
      await page.click('#examples button:text-is("Calculator")');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished >> nth=1', { timeout: 60_000 });
      // Before: the box stayed at the top, the new question and its answer below it, out of view.
      const inView = await page.$eval('#conversation', (box) => {
        const bottom = box.getBoundingClientRect().bottom;
        return [...box.querySelectorAll('.turn')].slice(-2).map((turn) => turn.getBoundingClientRect().bottom <= bottom + 1);
      });
      expect(inView).toEqual([true, true]);
      expect(await page.textContent('.turn.assistant:last-of-type .content')).toContain('140200');
    }, { viewport: { width: 1280, height: 900 } });
  }, 90_000);

  it('says which key sends, where a first-time reader looks and to assistive technology (Enter writes a new line)', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      // Before: nothing said it; Enter, as in most chats, only wrote a new line.
      expect(await page.getAttribute('#prompt', 'placeholder')).toBe('Ask something, or pick an example above (Ctrl+Enter sends)');
      expect(await page.getAttribute('#prompt', 'aria-keyshortcuts')).toBe('Control+Enter Meta+Enter');
      expect(await page.getAttribute('#send', 'title')).toBe('Send (Ctrl+Enter)');
      await page.fill('#prompt', 'What is 200*701?');
      await page.press('#prompt', 'Enter');
      expect(await page.inputValue('#prompt')).toBe('What is 200*701?\n');
      await page.press('#prompt', 'Control+Enter');
      await page.waitForSelector('.turn.assistant.finished', { timeout: 60_000 });
      expect(await page.textContent('.turn.user .content')).toBe('What is 200*701?');
    });
  }, 90_000);

  it('follows the system\'s dark scheme, every text at 4.5:1 or more on its box (WCAG AA), as in light', async () => {
    for (const colorScheme of ['dark', 'light'] as const) {
      await suite.withPage(async (page) => {
        await openPlayground(page, suite.conveyor.gateway.url);
        // Tool events of every kind (recognised, failed, done), a failed bar, and an error's notes.
        await runExample(page, 'Validation (rejected)');
        await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
        await page.$eval('#model', (select) => select.append(new Option('no-such-model', 'no-such-model', true, true)));
        await page.fill('#prompt', 'hello');
        await page.click('#send');
        await page.waitForSelector('.turn.assistant.finished >> nth=1');
        const { page: background, low } = await page.evaluate(() => {
          const rgb = (color: string) => color.match(/[\d.]+/g)!.map(Number);
          const luminance = (channels: number[]) => {
            const [r, g, b] = channels.map((c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4));
            return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
          };
          const boxOf = (e: Element | null): number[] => {
            for (; e; e = e.parentElement) {
              const c = rgb(getComputedStyle(e).backgroundColor);
              if ((c[3] ?? 1) > 0) return c.slice(0, 3);
            }
            return [255, 255, 255];
          };
          const low: string[] = [];
          const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const e = node.parentElement!;
            // Hidden text, and disabled controls (WCAG exempts them), are not read against their box.
            if (!node.textContent!.trim() || e.closest('.visually-hidden, [hidden], :disabled, option')) continue;
            const [a, b] = [luminance(rgb(getComputedStyle(e).color).slice(0, 3)), luminance(boxOf(e))];
            const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
            if (ratio < 4.5) low.push(`${ratio.toFixed(2)} ${e.tagName}.${e.className} "${node.textContent!.trim().slice(0, 30)}"`);
          }
          return { page: luminance(boxOf(document.body)), low };
        });
        // Before: a white page whatever the system's scheme.
        if (colorScheme === 'dark') expect(background).toBeLessThan(0.05);
        else expect(background).toBeGreaterThan(0.8);
        expect(low).toEqual([]);
      }, { colorScheme, viewport: { width: 1280, height: 900 } });
    }
  }, 120_000);

  it('names its regions, so a screen reader\'s landmarks and a focused scroll box say which is which', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      // Before: the tool events were an unnamed "complementary", the timeline no region at all.
      for (const [role, name] of [['region', 'conversation'], ['complementary', 'Tool events'], ['region', 'Timeline']] as const) {
        expect(await page.getByRole(role, { name, exact: true }).count()).toBe(1);
      }
    });
  }, 90_000);

  it('says the gateway could not be reached when the chat request gets no connection', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.route('**/v1/chat/completions', (route) => route.abort('connectionrefused'));
      await page.fill('#prompt', 'hello');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished');
      // Before: "error: Failed to fetch", the browser's words, nothing said of the gateway.
      expect(await page.textContent('#status')).toBe('error: the gateway could not be reached (Failed to fetch)');
      expect(await page.textContent('.turn.assistant .note')).toBe(await page.textContent('#status'));
      expect(await page.inputValue('#prompt')).toBe('hello');
    });
  }, 90_000);

  it('gives a screen reader each timeline bar\'s times, not only its label', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Calculator');
      await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
      const rows = await page.$$eval('#timeline .row', (rows) => rows.map((row) => [row.textContent!, (row.querySelector('.bar') as HTMLElement).title]));
      expect(rows).toHaveLength(3);
      // Before: "round 1 · decode" alone; the times were in the bar's title, read on hover.
      for (const [text, title] of rows) {
        const [from, to] = title!.split(/–| s/);
        expect(text).toMatch(/ · \S/);
        expect(text!.endsWith(`from ${from} s to ${to} s`)).toBe(true);
      }
    });
  }, 90_000);

  it('shows each timeline bar\'s times in text beside it, or under it on a phone, not only on hover', async () => {
    for (const width of [1280, 380]) {
      await suite.withPage(async (page) => {
        await openPlayground(page, suite.conveyor.gateway.url);
        await runExample(page, 'Calculator');
        await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
        const rows = await page.$$eval('#timeline .row', (rows) =>
          rows.map((row) => {
            const times = row.querySelector('.times')!;
            const [shown, track] = [times.getBoundingClientRect(), row.querySelector('.track')!.getBoundingClientRect()];
            // Whole (not cut by its column) and in view, left of the bar's end on a phone, where it goes under it.
            return { text: times.textContent, title: (row.querySelector('.bar') as HTMLElement).title, whole: times.scrollWidth <= times.clientWidth, placed: shown.width > 1 && shown.height > 1 && (shown.left >= track.right || shown.top >= track.bottom) };
          }),
        );
        expect(rows).toHaveLength(3);
        // Before: in a 1-px visually-hidden span, the bar's title the only times a sighted reader could get, by mouse.
        for (const { text, title, whole, placed } of rows) {
          const [from, to] = title.split(/–| s/);
          expect({ text, whole, placed }).toEqual({ text: `from ${from} s to ${to} s`, whole: true, placed: true });
        }
        // The bars still line up: every row's track as wide.
        expect(new Set(await page.$$eval('#timeline .track', (tracks) => tracks.map((t) => t.clientWidth))).size).toBe(1);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      }, { viewport: { width, height: 900 } });
    }
  }, 120_000);

  it('keeps the model picked when the key is typed again, and says the typed key is refused when a chat is refused for it', async () => {
    const keyed = await startTestConveyor({ gateway: { apiKeys: ['pg-key'] } });
    const page = await suite.browser.newPage();
    try {
      await page.goto(`${keyed.gateway.url}/`);
      await page.fill('#key', 'pg-key');
      await page.press('#key', 'Enter');
      await modelsListed(page);
      const options = await page.$$eval('#model option', (list) => list.map((o) => o.textContent!));
      expect(options.length).toBeGreaterThan(1);
      await page.selectOption('#model', options[1]!);

      // A wrong key: the list cannot come, and a chat sent with it is refused.
      await page.fill('#key', 'not-the-key');
      await page.press('#key', 'Enter');
      // Before: "(enter the API key above)", as if none had been typed.
      await page.waitForFunction(() => document.getElementById('status')?.textContent?.includes('(the gateway does not take the API key above: check it)'));
      await page.fill('#prompt', 'hello');
      await page.click('#send');
      await page.waitForSelector('.turn.assistant.finished');
      // Before: only the gateway's words, 'send "Authorization: Bearer <key>"', meant for API clients.
      expect(await page.textContent('#status')).toMatch(/^error: .*\(the gateway does not take the API key above: check it\)$/);

      await page.fill('#key', 'pg-key');
      await page.press('#key', 'Enter');
      await page.waitForFunction(() => document.getElementById('status')?.textContent === '');
      // Before: the list came again with its first model picked.
      expect(await page.inputValue('#model')).toBe(options[1]);
    } finally {
      await page.close();
      await keyed.close();
    }
  }, 90_000);

  it('numbers a tool\'s parallel calls in the events list, so results that come as each call finishes say whose they are', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await modelsListed(page);
      await runExample(page, 'Search ×3');
      const items = await page.$$eval('#events li span', (spans) => spans.map((s) => s.textContent ?? ''));
      // Before: three "search call recognised" and three "search done: …", none told from another.
      expect(items.filter((t) => t.endsWith('call recognised'))).toEqual(['search call recognised', 'search #2 call recognised', 'search #3 call recognised']);
      expect(items.filter((t) => /^search( #\d)? done: /.test(t)).map((t) => t.split(' done:')[0]).sort()).toEqual(['search', 'search #2', 'search #3']);
    });
  });

  it('cuts a long result at 200 characters without splitting one in two (an emoji is two UTF-16 units)', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      // A string, not a function: the test runner's transform would rewrite a function's import().
      const text = await page.evaluate(`(async () => {
        const { eventItem } = await import('/playground/events-list.js');
        return eventItem({ type: 'tool_call.completed', name: 'search', ok: true, content: 'a'.repeat(199) + '😀 and more' })[0];
      })()`);
      // Before: 'a' × 199 and a lone surrogate, which the page drew as �.
      expect(text).toBe(`search done: ${'a'.repeat(199)}😀…`);
      expect(await page.evaluate(`import('/playground/events-list.js').then((m) => m.eventItem({ type: 'tool_call.completed', name: 'n', ok: false, content: 'short' })[0])`)).toBe('n failed: short');
    });
  });

  it('says what an output chunk of only whitespace was (print() alone), instead of an item with nothing after its name', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      const items = await page.evaluate(`import('/playground/events-list.js').then((m) =>
        ['\\n', '\\n\\n\\n', '  ', 'x\\n'].map((text) => m.eventItem({ type: 'tool_call.output', name: 'python', stream: 'stdout', text })[0]))`);
      // Before: 'python stdout: ' for each of the first three.
      expect(items).toEqual(['python stdout: (a blank line)', 'python stdout: (3 blank lines)', 'python stdout: (whitespace)', 'python stdout: x']);
    });
  });

  it('cuts a long output chunk at 1,000 characters (one printed 100 KB line was one item taller than the list)', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      const item = await page.evaluate(`import('/playground/events-list.js').then((m) =>
        m.eventItem({ type: 'tool_call.output', name: 'python', stream: 'stdout', text: 'y'.repeat(100000) + '\\n' })[0])`);
      expect(item).toBe(`python stdout: ${'y'.repeat(1000)}…`);
    });
  });
});
