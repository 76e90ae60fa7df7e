import type { ToolProgress } from './plugin-types.ts';

/** Per call: more progress than this is not passed on (client events, timeline marks). */
export const MAX_PROGRESS_EVENTS = 10_000;
/** Per call: characters of `output` progress passed on (the Python sandbox's own cap is lower). */
export const MAX_PROGRESS_TEXT = 1024 * 1024;

/** Events and characters of output a call's progress has taken of its budget. */
export interface ProgressUsed {
  events: number;
  text: number;
}

/**
 * What one call's progress may cost its request. A tool's `emit` is not bounded by the tool
 * itself (a kit plugin may call it in a loop), and each event becomes an SSE chunk, and a
 * `unit-done` also a timeline event kept with the request's timeline: a plugin that never stopped
 * emitting held the client's stream and grew the gateway's memory without limit. Past the budget
 * one note says so and the rest is dropped; the call itself runs on to its result.
 */
export class ProgressBudget {
  #events = 0;
  #text = 0;
  #spent = false;

  /**
   * The budget of a call whose earlier progress took `used` (a thread worker's share of one call's
   * budget: its hooks run in different workers, each told what the call has taken so far).
   */
  static after(used: ProgressUsed): ProgressBudget {
    const budget = new ProgressBudget();
    budget.#events = used.events;
    budget.#text = used.text;
    budget.#spent = used.events > MAX_PROGRESS_EVENTS || used.text > MAX_PROGRESS_TEXT;
    return budget;
  }

  /** What the progress taken so far counts as. */
  get used(): ProgressUsed {
    return { events: this.#events, text: this.#text };
  }

  /** `progress` when it fits, the note once when it first does not, undefined after. */
  take(progress: ToolProgress): ToolProgress | undefined {
    if (this.#spent) return undefined;
    this.#events += 1;
    if (progress.type === 'output') this.#text += progress.text.length;
    if (this.#events <= MAX_PROGRESS_EVENTS && this.#text <= MAX_PROGRESS_TEXT) return progress;
    this.#spent = true;
    return {
      type: 'output',
      stream: 'stderr',
      text: `\n[conveyor: this call's progress went past ${MAX_PROGRESS_EVENTS} events or ${MAX_PROGRESS_TEXT} characters of output; the rest is not shown]\n`,
    };
  }
}
