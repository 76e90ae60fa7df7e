// The playground page (GET /): a chat against this gateway's own /v1 API that shows what partial
// execution does: tool events as they happen, and a timeline where each tool call's bar starts
// inside the decode that is still writing the call. Plain browser JavaScript, no build step;
// everything the model or a tool wrote goes into the page as text, never as HTML.

import { answerTurns } from './answer-turns.js';
import { AnswerRun } from './answer-run.js';
import { keyProblem, refusedKeyHint, requestHeaders } from './api-key.js';
import { el } from './dom.js';
import { responseError } from './error-message.js';
import { offerExamples, showExamples } from './examples.js';
import { bindSendKeys } from './send-keys.js';
import { readStream } from './sse.js';

const $ = (id) => document.getElementById(id);
const ui = {
  settings: $('settings'), model: $('model'), partial: $('partial'), key: $('key'), examples: $('examples'), conversation: $('conversation'),
  events: $('events'), timeline: $('timeline'), stats: $('stats'), form: $('ask'), prompt: $('prompt'),
  send: $('send'), stop: $('stop'), clear: $('clear'), status: $('status'), announcer: $('announcer'),
};

/** The conversation so far, as sent upstream: user turns and the assistant's visible answers. */
let history = [];
/** The example last picked: its tools and extra fields go with the next request. */
let picked;
let running;
/** The run whose timeline the panel shows: the latest one, none after New chat. */
let shown;

const headers = () => requestHeaders(ui.key.value);

function setStatus(text, isError = false) {
  ui.status.textContent = text;
  ui.status.classList.toggle('error', isError);
}

/** Lists the gateway's models; false, and the status says why after `before`, when it lists none. */
async function loadModels(before = '') {
  sessionStorage.setItem('conveyor-key', ui.key.value.trim());
  let res;
  try {
    res = await fetch('v1/models', { headers: headers() });
  } catch (err) {
    // A network failure, or a key no header can carry (keyProblem).
    setStatus(`${before}GET /v1/models failed: ${err.message}`, true);
    return false;
  }
  if (!res.ok) {
    setStatus(`${before}GET /v1/models: ${await responseError(res)}${res.status === 401 ? refusedKeyHint(ui.key.value) : ''}`, true);
    return false;
  }
  const body = await res.json().catch(() => ({}));
  // The model picked stays picked when the list comes again (a key typed in, Send after a failed list).
  const chosen = ui.model.value;
  ui.model.replaceChildren(...(body.data ?? []).map((m) => el('option', undefined, m.id)));
  if ([...ui.model.options].some((option) => option.value === chosen)) ui.model.value = chosen;
  setStatus(ui.model.value ? '' : `${before}GET /v1/models listed no model`, !ui.model.value);
  return ui.model.value !== '';
}

/**
 * A run's timeline lost the request. Once the run has ended it is said after that ending: an events
 * socket cut after the answer replaced "done · request …" (or "stopped") with the trouble alone.
 * Not at all once a later request (or New chat) has the status line.
 */
function timelineTrouble(run, text) {
  if (shown === run) setStatus(run.ending === undefined ? text : `${run.ending} · ${text}`, true);
}

async function send(prompt) {
  const turn = el('div', 'turn user');
  turn.append(el('div', 'who', 'you'), el('pre', 'content', prompt));
  ui.conversation.append(turn);
  history.push({ role: 'user', content: prompt });
  const example = picked?.prompt === prompt ? picked : undefined;
  const run = (running = shown = new AnswerRun({ ui, headers, onTrouble: timelineTrouble }));
  // Sending is asking to follow the new turn: a reader scrolled up to an earlier answer had the
  // question and its answer stream out of view, and the answer did not follow since they were not at the bottom.
  ui.conversation.scrollTop = ui.conversation.scrollHeight;
  const frame = () => {
    // A later request, or New chat, has the panel now: this run's frames stop drawing into it.
    if (shown !== run) return;
    // Refused before it began (a bad model, a missing key), or no answer came at all (the
    // connection failed, Stop before the answer began): there is no timeline to draw.
    if (run.noTimeline) {
      ui.timeline.replaceChildren();
      ui.stats.textContent = '';
      return;
    }
    run.render();
    run.timeline.draw();
    // Until the server's request-end arrives (it trails the stream's [DONE] a little), or not at
    // all; none will once the timeline has lost the request.
    const waiting = run.timeline.end === undefined && run.timeline.lostAt === undefined && (run.finishedAt === undefined || performance.now() - run.finishedAt < 3000);
    if (running === run || waiting) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  // As with Stop below: the disabled Send button would drop the focus to the page's body, where a
  // screen reader says nothing; from the prompt, Tab reaches Stop.
  if (document.activeElement === ui.send) ui.prompt.focus();
  ui.send.disabled = true;
  ui.stop.disabled = false;
  setStatus('streaming…');
  try {
    const res = await fetch('v1/chat/completions', {
      method: 'POST',
      headers: headers(),
      signal: run.abort.signal,
      body: JSON.stringify({
        model: ui.model.value,
        stream: true,
        stream_options: { include_usage: true },
        partial_execution: ui.partial.checked,
        messages: history,
        ...(example?.tools ? { tools: example.tools.map((name) => ({ type: 'function', function: { name } })) } : {}),
        ...example?.extra,
      }),
    }).catch((err) => {
      // The browser's own words ("Failed to fetch") do not say that the gateway is gone (stopped, restarted elsewhere).
      throw err.name === 'AbortError' ? err : new Error(`the gateway could not be reached (${err.message})`);
    });
    if (!res.ok) {
      run.noTimeline = true;
      throw new Error(`${await responseError(res)}${res.status === 401 ? refusedKeyHint(ui.key.value) : ''}`);
    }
    run.bubble.dataset.requestId = res.headers.get('x-conveyor-request-id') ?? '';
    run.timeline.follow(run.bubble.dataset.requestId, ui.key.value.trim());
    await readStream(res, (chunk) => run.chunk(chunk));
    // With the tool rounds' calls and observations, so a follow-up question can build on them.
    history.push(...answerTurns({ turns: run.turns, text: run.text, calls: run.clientCalls }));
    run.announce([run.text, run.callsText()].filter((part) => part !== '').join('\n'));
    // The answer is whole, unless the token limit (max_tokens, or a full context) cut it: it goes
    // back as history all the same (it is what the model wrote), but it read "done" like a whole
    // one, nothing on the page saying the model had not finished.
    const cut = run.finishReason === 'length';
    // The gateway says "length" too when its tool rounds ran out (max_tool_rounds); its
    // response.messages event says which limit it was. It read as the model's token limit, which
    // no setting of the model's changes.
    const roundsOut = cut && run.stopReason === 'max_tool_rounds';
    if (cut) {
      run.bubble.classList.add('cut');
      run.bubble.append(el('div', 'note', roundsOut ? "cut short: the gateway's limit of tool rounds (max_tool_rounds) came before the model answered" : 'cut short: the model reached its token limit (finish_reason "length")'));
    }
    // A timeline that could not follow it still says so.
    const trouble = run.timeline.trouble;
    run.ending = `done${cut ? `, cut short at the ${roundsOut ? 'tool-round' : 'token'} limit` : ''} · request ${run.bubble.dataset.requestId}`;
    // The path this page reaches it at (a proxy may serve the page under one), as its own fetches do.
    const timelinePath = new URL(`v1/requests/${encodeURIComponent(run.bubble.dataset.requestId ?? '')}/timeline`, document.baseURI).pathname;
    setStatus(`${run.ending} · ${trouble ?? `its timeline: ${timelinePath}`}`, trouble !== undefined);
  } catch (err) {
    // Whatever stopped the page reading (a bad chunk, a thrown error) stops the request too, so
    // the gateway does not go on decoding and running tools for an answer nobody reads.
    run.abort.abort();
    // No answer began, so no request id to follow: the panel would count "elapsed" for 3 s and keep it.
    if (run.bubble.dataset.requestId === undefined) run.noTimeline = true;
    // Not sent again: the next question goes without this turn, and the page says so.
    history.pop();
    turn.classList.add('left-out');
    // Stopped or cut part way, it had an answer, just not a whole one: "it got no answer" said otherwise.
    turn.append(el('div', 'note', `left out of the conversation: ${run.began ? 'its answer was cut short' : 'it got no answer'}`));
    // After New chat the run is gone from the page: its end is no news for the new conversation.
    const stopped = err.name === 'AbortError';
    run.ending = stopped ? 'stopped' : `error: ${err.message}`;
    if (shown === run) setStatus(run.ending, !stopped);
    // In the bubble too: the status line is the next request's once it is sent, and a refused
    // request's bubble was left empty. A stop is the reader's choice, not a failure.
    run.bubble.classList.add(stopped ? 'stopped' : 'failed');
    run.bubble.append(el('div', 'note', stopped ? 'stopped' : `error: ${err.message}`));
    // And in the events list, at the time it happened, after the tool events it cut short.
    run.events.dropUnfinished(stopped ? 'stopped' : 'the request failed', stopped ? '' : 'failed');
    run.events.add(stopped ? 'stopped: the request was cancelled at the gateway' : `error: ${err.message}`, stopped ? '' : 'failed');
    // The turn is left out of the conversation: its question goes back in the box, to send again
    // as it is or mended, unless a new one is being written there.
    if (shown === run && ui.prompt.value === '') ui.prompt.value = prompt;
  } finally {
    // Not after New chat: the cleared events list belongs to the next conversation.
    if (shown === run) run.render();
    running = undefined;
    run.finishedAt = performance.now();
    run.bubble.classList.add('finished');
    ui.send.disabled = false;
    // A disabled button loses focus to the page's body: a keyboard user who pressed Stop goes on from the prompt.
    if (document.activeElement === ui.stop) ui.prompt.focus();
    ui.stop.disabled = true;
  }
}

ui.form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const prompt = ui.prompt.value.trim();
  if (!prompt || running) return;
  // Like a missing model below: the question stays in its box, not left out of a request never sent.
  const problem = keyProblem(ui.key.value);
  if (problem) return setStatus(`not sent: ${problem}`, true);
  // The list did not load (no key yet, the upstream down): list it again rather than send no
  // model, which the gateway can only refuse, and the prompt with it.
  if (!ui.model.value && (!(await loadModels('not sent: ')) || running)) return;
  ui.prompt.value = '';
  void send(prompt);
});
bindSendKeys({
  form: ui.form,
  prompt: ui.prompt,
  send: ui.send,
  whileBusy: () => setStatus('streaming… · not sent: the answer before is still coming (Stop ends it); your question stays in its box'),
});
ui.stop.addEventListener('click', () => running?.abort.abort());
ui.clear.addEventListener('click', () => {
  running?.abort.abort();
  running?.timeline.close();
  shown = undefined;
  history = [];
  ui.conversation.replaceChildren();
  ui.events.replaceChildren();
  ui.timeline.replaceChildren();
  ui.stats.textContent = '';
  setStatus('');
});
ui.key.addEventListener('change', () => void loadModels());
ui.settings.addEventListener('submit', (event) => {
  event.preventDefault();
  void loadModels();
});

// The key typed in lives as long as the tab (sessionStorage), not on disk.
ui.key.value = sessionStorage.getItem('conveyor-key') ?? '';
showExamples(ui.examples, ui.prompt, (example) => {
  picked = example;
});
// /health (served without a key) names the tools the gateway runs. Where it cannot be read (a
// proxy that does not pass it on), every example stays offered, as before.
fetch('health')
  .then((res) => (res.ok ? res.json() : undefined))
  .then((health) => Array.isArray(health?.tools) && offerExamples(ui.examples, health.tools))
  .catch(() => {});
void loadModels();
