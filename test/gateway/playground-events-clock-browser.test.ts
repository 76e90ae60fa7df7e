import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { browserAndConveyor, describeInBrowser } from '../support/browser-suite.ts';
import { openPlayground, runExample } from '../support/playground-page.ts';

/**
 * Round 1 calls the gateway's calculator, round 2 the client's own get_weather (Mistral's format,
 * the simulator's model): the client's call, which the server does not time, between timed events.
 * Or one round that calls both.
 */
const GATEWAY_THEN_CLIENT_CALL = {
  name: 'gateway-then-client-call',
  rules: [
    { when: { lastUser: 'sum then weather', round: 1, lastRole: 'user' as const }, reply: '[TOOL_CALLS][{"name": "calculator", "arguments": {"expression": "2+3"}}]' },
    { when: { lastUser: 'sum then weather', round: 2, lastRole: 'tool' as const }, reply: 'Five. [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}}]' },
    // One round calling both: the client's tool first.
    { when: { lastUser: 'weather and sum', round: 1, lastRole: 'user' as const }, reply: 'Both. [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "calculator", "arguments": {"expression": "2+3"}}]' },
    // Round 2 decodes a long sentence before its client call: the call comes well after the round's start.
    { when: { lastUser: 'sum, then talk, then weather', round: 1, lastRole: 'user' as const }, reply: '[TOOL_CALLS][{"name": "calculator", "arguments": {"expression": "2+3"}}]' },
    { when: { lastUser: 'sum, then talk, then weather', round: 2, lastRole: 'tool' as const }, reply: `Five. ${'Now for the weather, which takes a while to say. '.repeat(8)}[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}}]` },
    // A script that sleeps, then a client call long to write: the script's output and result come
    // while the call is decoded, which validate_tool_arguments holds back until it is whole.
    {
      when: { lastUser: 'sleep, then weather', round: 1, lastRole: 'user' as const },
      reply: `[TOOL_CALLS][{"name": "python", "arguments": {"code": "import time\\ntime.sleep(0.5)\\nprint('slept')\\n"}}, {"name": "get_weather", "arguments": {"city": "Oslo${', by the fjord'.repeat(40)}"}}]`,
    },
  ],
};

/** A tool of the client's own (it has its parameters): the gateway sends its calls back to the client. */
const GET_WEATHER = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** Every read of a response body handed on `ms` late: a page too busy to keep up with its stream, while the events socket keeps up. */
const readLate = (ms: number) => {
  const read = ReadableStreamDefaultReader.prototype.read;
  ReadableStreamDefaultReader.prototype.read = function (this: ReadableStreamDefaultReader) {
    return read.call(this).then((result) => new Promise((resolve) => setTimeout(() => resolve(result), ms)));
  } as typeof read;
};

/** Every message of the events socket handed on `ms` late, and its close after them, as it came. */
const socketLate = (ms: number) => {
  window.WebSocket = class extends WebSocket {
    override set onmessage(handle: (message: MessageEvent) => void) {
      super.onmessage = (message) => setTimeout(() => handle(message), ms);
    }
    override set onclose(handle: (event: CloseEvent) => void) {
      super.onclose = (event) => setTimeout(() => handle(event), ms);
    }
  };
};

/**
 * Sends `prompt` from the playground with the client's get_weather beside the calculator (the
 * page has no client tools of its own), waits for the answer, and returns the events list's texts.
 */
async function askWithClientTool(page: Page, url: string, prompt: string, extra: Record<string, unknown> = {}): Promise<(string | null)[]> {
  await page.route('**/v1/chat/completions', async (route) => {
    const body = route.request().postDataJSON() as Record<string, unknown>;
    const tools = [{ type: 'function', function: { name: 'calculator' } }, { type: 'function', function: { name: 'python' } }, GET_WEATHER];
    await route.continue({ postData: JSON.stringify({ ...body, tools, ...extra }) });
  });
  await openPlayground(page, url);
  await page.fill('#prompt', prompt);
  await page.click('#send');
  await page.waitForSelector('.turn.assistant.finished', { timeout: 60_000 });
  await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
  return page.$$eval('#events li span', (items) => items.map((item) => item.textContent));
}

/** Every read of a response body that carries a client's tool call handed on `ms` late, and the reads after it with it. */
const toolCallsReadLate = (ms: number) => {
  const read = ReadableStreamDefaultReader.prototype.read;
  const decoder = new TextDecoder();
  ReadableStreamDefaultReader.prototype.read = function (this: ReadableStreamDefaultReader) {
    return read.call(this).then((result) =>
      result.value instanceof Uint8Array && decoder.decode(result.value).includes('"tool_calls"') ? new Promise((resolve) => setTimeout(() => resolve(result), ms)) : result,
    );
  } as typeof read;
};

/** The events list's item for a call of the client's get_weather. */
const CLIENT_CALL = 'client tool call: get_weather (not run: the playground runs no client tools)';

/** The server's time (seconds, as the list says them) of the call-start of the request's get_weather call. */
async function clientCallStart(page: Page, gatewayUrl: string): Promise<string> {
  const id = await page.getAttribute('.turn.assistant', 'data-request-id');
  const { events } = (await (await fetch(`${gatewayUrl}/v1/requests/${id}/timeline`)).json()) as { events: TimelineEvent[] };
  return `${(events.find((e) => e.type === 'call-start' && e.detail === 'get_weather')!.t / 1000).toFixed(3)} s`;
}

const listedTimes = (page: Page) => page.$$eval('#events li time', (items) => items.map((item) => parseFloat(item.textContent!)));

// The events list and the timeline say when the same things happened: the list counted from the
// moment the page sent the request, the timeline from the moment the gateway had it. A slow way
// there (a proxy, a far gateway) put the whole list that much later than the timeline's bars.
describeInBrowser('the playground events list on the timeline\'s clock (Chromium)', () => {
  const suite = browserAndConveyor({ sim: { scenarios: [GATEWAY_THEN_CLIENT_CALL] } });

  /** The request held this long before it leaves the page: a slow uplink. */
  const UPLINK_DELAY_MS = 2_000;

  it('gives a tool event the time its bar has, however long the request took to reach the gateway', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.route('**/v1/chat/completions', async (route) => {
        await new Promise((resolve) => setTimeout(resolve, UPLINK_DELAY_MS));
        await route.continue();
      });
      await runExample(page, 'Calculator');
      await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
      const id = await page.getAttribute('.turn.assistant', 'data-request-id');
      const { events } = (await (await fetch(`${suite.conveyor.gateway.url}/v1/requests/${id}/timeline`)).json()) as { events: TimelineEvent[] };
      const serverSeconds = (type: string) => events.find((e) => e.type === type)!.t / 1000;
      const listed = async (text: string) => parseFloat((await page.textContent(`#events li:has(span:text-is("${text}")) time`))!);
      // Before: 2 s and more after the server's times, as if the calculator ran 2 s later than its bar.
      expect(Math.abs((await listed('calculator call recognised')) - serverSeconds('call-start'))).toBeLessThan(UPLINK_DELAY_MS / 2000);
      expect(Math.abs((await listed('round 2 finished (stop)')) - serverSeconds('request-end'))).toBeLessThan(UPLINK_DELAY_MS / 2000);
    });
  }, 90_000);

  it('says a round started when its decode bar starts, not when the stream told of it with its first tool event', async () => {
    await suite.withPage(async (page) => {
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Python: sine wave');
      await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
      // The chat stream holds a round's start back until its first tool event (an answer with no
      // tool has none); the list gave it that moment, here the script's fence, after the
      // sentence before it: the round "started" well inside its own decode bar.
      const listed = await page.textContent('#events li:has(span:text-is("round 1 started")) time');
      const bar = await page.textContent('#timeline .row:has(.label:text-is("round 1 · decode")) .times');
      expect(bar).toMatch(/^from \d+\.\d{3} s to /);
      expect(`from ${listed} to`).toBe(bar!.slice(0, `from ${listed} to`.length));
    });
  }, 90_000);

  it('keeps the list\'s times in order when the events socket\'s first event comes after the chat stream\'s first events', async () => {
    await suite.withPage(async (page) => {
      // Every message of the events socket handed on late: a socket slow to open or to start.
      await page.addInitScript(socketLate, 1500);
      await openPlayground(page, suite.conveyor.gateway.url);
      await page.route('**/v1/chat/completions', async (route) => {
        await new Promise((resolve) => setTimeout(resolve, UPLINK_DELAY_MS));
        await route.continue();
      });
      await runExample(page, 'Python: sine wave');
      await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
      const times = await listedTimes(page);
      // Before: those put on the page before the socket's first event counted from the send, 2 s
      // more than those after, which count from the server's zero. Each item now says its event's
      // own server time (`t`), so no step back at all.
      expect(times.length).toBeGreaterThan(3);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });
  }, 90_000);

  it('keeps the list\'s times in order when the page reads the chat stream late', async () => {
    await suite.withPage(async (page) => {
      // Every read of a response body handed on late: a page too busy to keep up with its stream,
      // while the events socket keeps up.
      await page.addInitScript(readLate, 20);
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Python: sine wave');
      await page.waitForFunction(() => document.getElementById('stats')?.textContent?.includes('total'));
      const times = await listedTimes(page);
      // Before: an item was timed when it reached the page, a round's start at the server's time
      // of it, so "round 2 started" came before the "round 1 finished" above it, by how late the page read.
      expect(times.length).toBeGreaterThan(3);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });
  }, 90_000);

  it('keeps a client tool call, which the server does not time, in order among timed events when the page reads the stream late', async () => {
    await suite.withPage(async (page) => {
      await page.addInitScript(readLate, 250);
      const texts = await askWithClientTool(page, suite.conveyor.gateway.url, 'Work out a sum then weather in Oslo');
      expect(texts).toEqual([
        'round 1 started',
        'calculator call recognised',
        expect.stringMatching(/^calculator done: /),
        expect.stringMatching(/^round 1 finished /),
        'round 2 started',
        'client tool call: get_weather (not run: the playground runs no client tools)',
        expect.stringMatching(/^round 2 finished /),
      ]);
      // Before: the client's call was timed when it reached the page, on the timeline's clock (the
      // server's now): later than the round's end under it, which the server timed, by how late the page read.
      const times = await listedTimes(page);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });
  }, 90_000);

  it('runs the live timeline\'s clock no later than the stream\'s server times when the events socket is late', async () => {
    await suite.withPage(async (page) => {
      await page.addInitScript(socketLate, 1500);
      await page.addInitScript(() => {
        // The answer's headers handed on late: a page busy when they came (its stream then read in a rush).
        const fetched = window.fetch;
        window.fetch = (input, init) =>
          fetched(input, init).then((res) => (String(input).endsWith('chat/completions') ? new Promise((resolve) => setTimeout(() => resolve(res), 1000)) : res));
        // At each draw of the timeline while the request runs: its elapsed (its clock's now, in
        // hundredths) against the latest server time the list shows, put there in the same frame
        // just before (the list alone is drawn once more as the answer ends: not that one).
        const behind: number[] = [];
        Object.assign(window, { behind });
        document.addEventListener('DOMContentLoaded', () => {
          const stats = document.getElementById('stats')!;
          new MutationObserver(() => {
            const elapsed = /elapsed (\d+\.\d+) s/.exec(stats.textContent ?? '')?.[1];
            const listed = [...document.querySelectorAll('#events li time')].map((time) => parseFloat(time.textContent!));
            if (elapsed !== undefined && listed.length > 0) behind.push(Math.max(...listed) - parseFloat(elapsed));
          }).observe(stats, { childList: true, characterData: true, subtree: true });
        });
      });
      await openPlayground(page, suite.conveyor.gateway.url);
      await runExample(page, 'Python: sine wave');
      const behind = await page.evaluate(() => (window as unknown as { behind: number[] }).behind);
      expect(behind.length).toBeGreaterThan(0);
      // Before: the clock counted from when the page had the answer's headers until the socket's
      // first event, and the socket's events came late too: the live bars ended, and "elapsed"
      // read, a second before events the list already showed. Now each stream event's t sets the
      // clock as the socket's do (elapsed is rounded to hundredths, the list's times to thousandths).
      expect(Math.max(...behind)).toBeLessThanOrEqual(0.0055);
    });
  }, 90_000);

  it('gives a client tool call its own time, not that of the last server event before it', async () => {
    await suite.withPage(async (page) => {
      const texts = await askWithClientTool(page, suite.conveyor.gateway.url, 'A sum, then talk, then weather in Oslo');
      expect(texts).toContain(CLIENT_CALL);
      const id = await page.getAttribute('.turn.assistant', 'data-request-id');
      const { events } = (await (await fetch(`${suite.conveyor.gateway.url}/v1/requests/${id}/timeline`)).json()) as { events: TimelineEvent[] };
      const roundStart = events.find((e) => e.type === 'round-start' && e.round === 2)!.t / 1000;
      const callStart = events.find((e) => e.type === 'call-start' && e.detail === 'get_weather')!.t / 1000;
      // The round's sentence before the call took its decode steps: the two times are apart.
      expect(callStart - roundStart).toBeGreaterThan(0.2);
      const listed = parseFloat((await page.textContent(`#events li:has(span:text-is("${CLIENT_CALL}")) time`))!);
      // Before: listed at "round 2 started"'s time, the last server time before it in the stream.
      expect(Math.abs(listed - callStart)).toBeLessThan(0.1);
    });
  }, 90_000);

  it('lists a round\'s start above a client tool call the round made before its first gateway tool event', async () => {
    await suite.withPage(async (page) => {
      const texts = await askWithClientTool(page, suite.conveyor.gateway.url, 'The weather and sum please');
      // The stream holds "round 1 started" back until the calculator's first event, so it comes
      // after the client's call, which the round wrote first. Before: it was listed under that
      // call, at the round's start, earlier than the call's time above it.
      expect(texts).toEqual([
        'round 1 started',
        'client tool call: get_weather (not run: the playground runs no client tools)',
        'calculator call recognised',
        expect.stringMatching(/^calculator done: /),
        expect.stringMatching(/^round 1 finished /),
      ]);
      const times = await listedTimes(page);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });
  }, 90_000);

  it('moves a client tool call to its own time when its call-start comes after the call reached the page', async () => {
    await suite.withPage(async (page) => {
      // The events socket 2 s behind, the stream's read of the call 1 s: the call is on the page
      // a second after the server had it, and its call-start comes a second after that.
      await page.addInitScript(socketLate, 2000);
      await page.addInitScript(toolCallsReadLate, 1000);
      const texts = await askWithClientTool(page, suite.conveyor.gateway.url, 'Work out a sum then weather in Oslo');
      // Before: it kept the time it reached the page, a second after its call-start, and was
      // listed under "round 2 finished", which the server timed before that.
      expect(texts).toEqual(['round 1 started', 'calculator call recognised', expect.stringMatching(/^calculator done: /), expect.stringMatching(/^round 1 finished /), 'round 2 started', CLIENT_CALL, expect.stringMatching(/^round 2 finished /)]);
      expect(await page.textContent(`#events li:has(span:text-is("${CLIENT_CALL}")) time`)).toBe(await clientCallStart(page, suite.conveyor.gateway.url));
      const times = await listedTimes(page);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });
  }, 90_000);

  it('lists a client tool call held for validate_tool_arguments at its own time, above the events that came while it was written', async () => {
    await suite.withPage(async (page) => {
      const texts = await askWithClientTool(page, suite.conveyor.gateway.url, 'Python: sleep, then weather in Oslo', { validate_tool_arguments: true });
      // Sent once whole, after the script's output and result: it started before them. Before:
      // listed under them, at the time of "python done" above it.
      const call = texts.indexOf(CLIENT_CALL);
      expect(call).toBeGreaterThan(0);
      expect(texts.indexOf('python stdout: slept')).toBeGreaterThan(call);
      expect(texts.findIndex((text) => text?.startsWith('python done: '))).toBeGreaterThan(call);
      expect(await page.textContent(`#events li:has(span:text-is("${CLIENT_CALL}")) time`)).toBe(await clientCallStart(page, suite.conveyor.gateway.url));
      const times = await listedTimes(page);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });
  }, 90_000);
});
