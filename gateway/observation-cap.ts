import type { ToolResult } from '../plugins/plugin-types.ts';

/** maxObservationChars by default: about 5,000 tokens, a sixth of a 32k context. */
export const DEFAULT_MAX_OBSERVATION_CHARS = 20_000;

/**
 * A tool result as the model is shown it: content past `max` characters loses its middle, with a
 * line saying how much went. A script that prints 256 KiB (the sandbox's output limit) would
 * otherwise fill the next round's prompt past the model's context, and the upstream's 400
 * ("reduce the length of the input messages") would reach a client that sent one line. The
 * start (what a program printed first, a page's title) and the end (a traceback's last line, a
 * final result) are what a model reads an observation for. `data` is left whole: it goes to the
 * client, not into the prompt.
 */
export function capObservation(result: ToolResult, max: number): ToolResult {
  const content = result.content;
  if (content.length <= max) return result;
  const note = (cut: number) => `\n[… ${cut.toLocaleString('en-US')} characters of this output cut …]\n`;
  // Room for the note with the longest count it could say; the count written is what went.
  const keep = Math.max(0, max - note(content.length).length);
  // Never between the two halves of a surrogate pair: a lone half is not text a tokenizer takes.
  const head = withinPair(content, Math.ceil(keep / 2)) ? Math.ceil(keep / 2) - 1 : Math.ceil(keep / 2);
  let from = content.length - (keep - Math.ceil(keep / 2));
  if (withinPair(content, from)) from += 1;
  return { ...result, content: `${content.slice(0, head)}${note(from - head)}${from < content.length ? content.slice(from) : ''}` };
}

/** Whether `at` falls between a high and a low surrogate. */
function withinPair(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  return at > 0 && at < text.length && before >= 0xd800 && before <= 0xdbff;
}
