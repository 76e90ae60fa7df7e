import type { ToolProgress } from './plugin-types.ts';

/** Per call: more progress than this is not passed on (client events, timeline marks). */
export const MAX_PROGRESS_EVENTS = 10_000;
/** Per call: characters of `output` progress passed on (the Python sandbox's own cap is lower). */
export const MAX_PROGRESS_TEXT = 1024 * 1024;

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
