import { MarkerSet } from '../marker-search.ts';
import { matchLiteral, type RawText } from './format-parser.ts';

const ARGS = '[ARGS]';
const CALL_ID = '[CALL_ID]';
/** What may follow a v11 call's name; what ends its call id. */
const AFTER_NAME = new MarkerSet([ARGS, CALL_ID]);
const TO_ARGS = new MarkerSet([ARGS]);
/** Bounded so that an overlong name or id fails at the same character however the text is split. */
const MAX_NAME = 256;

/** A v11+ call's name so far (`raw`: the frame since [TOOL_CALLS]). */
export interface NameHead {
  raw: RawText;
  name: string;
}

/** Its call id so far: only its length is kept, as the id is frame. */
export interface CallIdHead {
  raw: RawText;
  id: number;
}

/**
 * What the head read next: `more` (it needs the next delta), `hold` (a marker may start at `at`:
 * hold from there), `call-id` (`[CALL_ID]` ends at `at`), `args` (the arguments' JSON starts at
 * `at`: after `[ARGS]`, or at its "{" under `--tokenizer-mode mistral`, which drops `[ARGS]`) or
 * `prose` (it is no call head: the frame is text, and reading resumes at `at`).
 */
export type HeadStep =
  | { kind: 'more' | 'call-id' | 'args' | 'prose'; at: number }
  | { kind: 'hold'; at: number; markers: MarkerSet };

/**
 * Mistral v11+'s call head after `[TOOL_CALLS]`: `name`, optionally `[CALL_ID]id`, then `[ARGS]`
 * (or straight to the arguments' "{"). Reads `buf` from `i` into `head`.
 */
export function readName(buf: string, i: number, head: NameHead): HeadStep {
  const room = MAX_NAME + 1 - head.name.length;
  let j = i;
  while (j < buf.length && j - i < room && isNameChar(buf.charCodeAt(j))) j++;
  head.name += buf.slice(i, j);
  head.raw.add(buf.slice(i, j));
  if (head.name.length > MAX_NAME) return { kind: 'prose', at: j };
  if (j === buf.length) return { kind: 'more', at: j };
  const args = matchLiteral(buf, j, ARGS);
  const callId = matchLiteral(buf, j, CALL_ID);
  if (args === 'partial' || callId === 'partial') return { kind: 'hold', at: j, markers: AFTER_NAME };
  if (args === 'full') {
    head.raw.add(ARGS);
    return { kind: 'args', at: j + ARGS.length };
  }
  if (callId === 'full') {
    head.raw.add(CALL_ID);
    return { kind: 'call-id', at: j + CALL_ID.length };
  }
  return { kind: buf[j] === '{' ? 'args' : 'prose', at: j };
}

/** The call id after `[CALL_ID]`, up to `[ARGS]`. */
export function readCallId(buf: string, i: number, head: CallIdHead): HeadStep {
  const room = MAX_NAME + 1 - head.id;
  let j = i;
  while (j < buf.length && j - i < room && buf[j] !== '[') j++;
  head.raw.add(buf.slice(i, j));
  head.id += j - i;
  if (head.id > MAX_NAME) return { kind: 'prose', at: j };
  if (j === buf.length) return { kind: 'more', at: j };
  const args = matchLiteral(buf, j, ARGS);
  if (args === 'partial') return { kind: 'hold', at: j, markers: TO_ARGS };
  if (args === 'full') {
    head.raw.add(ARGS);
    return { kind: 'args', at: j + ARGS.length };
  }
  return { kind: 'prose', at: j };
}

/** Function names as OpenAI allows them (letters, digits, "_", "-"), plus "." for namespaces. */
export function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46;
}
