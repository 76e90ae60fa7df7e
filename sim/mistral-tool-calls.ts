import { randomInt } from 'node:crypto';

/**
 * vLLM's server-side tool-call parsing (`--enable-auto-tool-choice --tool-call-parser mistral`) for
 * the simulator: a reply `text [TOOL_CALLS][{"name": …, "arguments": {…}}, …]` leaves the server as
 * `delta.tool_calls` (streamed) or `message.tool_calls` (not streamed) instead of as text.
 *
 * The simulator knows its whole reply before the first token, so the layout of the calls (where
 * each name ends, where each arguments object starts and ends) is found once, and each token's
 * text is then mapped onto it: no partial-JSON guessing, and the same output however the reply
 * splits into tokens.
 */

export const MISTRAL_TOOL_CALLS_MARKER = '[TOOL_CALLS]';

interface CallLayout {
  name: string;
  /** Offset just past the name's closing quote: the token reaching it announces the call. */
  nameEnd: number;
  /** The arguments value, [start, end): its text streams as `function.arguments`. */
  argsStart: number;
  argsEnd: number;
  /** The arguments as Python's json.dumps writes them (vLLM's non-streamed `arguments`). */
  argsJson: string;
}

export interface ToolCallsLayout {
  /** The whole reply the offsets refer to. */
  text: string;
  /** Where the marker starts: the text before it is content. */
  markerAt: number;
  calls: CallLayout[];
}

/** vLLM's DeltaToolCall, serialised with exclude_unset. */
export interface ToolCallDelta {
  id?: string;
  type?: 'function';
  index: number;
  function: { name?: string; arguments?: string };
}

export interface ReplyDelta {
  /** With a reasoning parser (reasoning-split.ts): the thinking, ahead of any content of the same token. */
  reasoning_content?: string;
  content?: string;
  tool_calls?: ToolCallDelta[];
}

export interface MessageToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * Where the calls sit in `text`, or undefined when it has no `[TOOL_CALLS]` followed by a JSON
 * list of `{"name": string, "arguments": …}` objects (vLLM then returns the text as content).
 * Text after the list is dropped, as vLLM's parser drops it.
 */
export function layoutToolCalls(text: string): ToolCallsLayout | undefined {
  const markerAt = text.indexOf(MISTRAL_TOOL_CALLS_MARKER);
  if (markerAt < 0) return undefined;
  const listStart = skipSpace(text, markerAt + MISTRAL_TOOL_CALLS_MARKER.length);
  if (text[listStart] !== '[') return undefined;
  const listEnd = valueEnd(text, listStart);
  if (listEnd === undefined) return undefined;
  let list: unknown;
  try {
    list = JSON.parse(text.slice(listStart, listEnd));
  } catch {
    return undefined;
  }
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const spans = objectMemberSpans(text, listStart);
  if (spans.length !== list.length) return undefined;
  const calls: CallLayout[] = [];
  for (let i = 0; i < list.length; i++) {
    const item = list[i] as Record<string, unknown> | null;
    const members = spans[i]!;
    const name = members.get('name');
    const args = members.get('arguments');
    if (typeof item !== 'object' || item === null || typeof item['name'] !== 'string' || !name || !args) return undefined;
    calls.push({ name: item['name'], nameEnd: name.end, argsStart: args.start, argsEnd: args.end, argsJson: pythonJsonDumps(item['arguments']) });
  }
  return { text, markerAt, calls };
}

/**
 * One streamed reply's deltas. `push` takes each token's text in order and returns what vLLM's
 * streaming parser would send for it: content before the marker, a call's id, type and name once
 * its name is complete, then its arguments as they are written; undefined for a token that adds
 * nothing a client sees (the list's brackets, keys and commas: vLLM sends no chunk for those).
 */
export class ToolCallsStream {
  readonly #layout: ToolCallsLayout;
  #at = 0;
  /** Calls whose name has been sent (their index in the list). */
  #announced = 0;

  constructor(layout: ToolCallsLayout) {
    this.#layout = layout;
  }

  /** Whether any call has been sent: the finish reason is then `tool_calls`. */
  get called(): boolean {
    return this.#announced > 0;
  }

  push(text: string): ReplyDelta | undefined {
    const from = this.#at;
    const to = from + text.length;
    this.#at = to;
    const { markerAt, calls } = this.#layout;
    const delta: ReplyDelta = {};
    if (from < markerAt) delta.content = text.slice(0, Math.min(to, markerAt) - from);
    const toolCalls: ToolCallDelta[] = [];
    calls.forEach((call, index) => {
      // A call is announced once; its arguments before that point (a list writing "arguments"
      // before "name") go out with the announcement.
      const argsFrom = index < this.#announced ? Math.max(from, call.argsStart) : call.argsStart;
      const argsTo = Math.min(to, call.argsEnd);
      if (index >= this.#announced) {
        if (to < call.nameEnd || index > this.#announced) return;
        this.#announced++;
        toolCalls.push({ id: mistralToolCallId(), type: 'function', index, function: { name: call.name } });
      }
      if (argsTo > argsFrom) toolCalls.push({ index, function: { arguments: this.#layout.text.slice(argsFrom, argsTo) } });
    });
    if (toolCalls.length > 0) delta.tool_calls = toolCalls;
    return delta.content === undefined && delta.tool_calls === undefined ? undefined : delta;
  }
}

/** The non-streamed message: content before the marker (null when empty) and the calls, or the text as content. */
export function messageToolCalls(text: string): { content: string | null; toolCalls: MessageToolCall[] } | undefined {
  const layout = layoutToolCalls(text);
  if (!layout) return undefined;
  const content = text.slice(0, layout.markerAt);
  return {
    content: content === '' ? null : content,
    toolCalls: layout.calls.map((call) => ({ id: mistralToolCallId(), type: 'function', function: { name: call.name, arguments: call.argsJson } })),
  };
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Mistral's tool-call ids: nine letters and digits (MistralToolCall.generate_random_id). */
function mistralToolCallId(): string {
  let id = '';
  for (let i = 0; i < 9; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}

/** Python's json.dumps(value, ensure_ascii=False): `", "` and `": "` separators. */
export function pythonJsonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pythonJsonDumps(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at]!)) at++;
  return at;
}

/** The end of the JSON string, object or list starting at `start` (just past its last character), or undefined if unclosed. */
function valueEnd(text: string, start: number): number | undefined {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      i = stringEnd(text, i) - 1;
      if (depth === 0) return i + 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (--depth === 0) return i + 1;
    }
  }
  return undefined;
}

/** Just past the closing quote of the string opening at `start` (text.length if unclosed). */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}

interface Span {
  start: number;
  end: number;
}

/**
 * For each object of the (already validated) JSON list at `listStart`: its members' value spans by
 * key, the value's `end` being just past its last character (a string's closing quote included).
 */
function objectMemberSpans(text: string, listStart: number): Map<string, Span>[] {
  const objects: Map<string, Span>[] = [];
  let i = skipSpace(text, listStart + 1);
  while (text[i] === '{') {
    const members = new Map<string, Span>();
    i = skipSpace(text, i + 1);
    while (text[i] === '"') {
      const keyEnd = stringEnd(text, i);
      const key = JSON.parse(text.slice(i, keyEnd)) as string;
      const start = skipSpace(text, skipSpace(text, keyEnd) + 1);
      const end = scalarOrValueEnd(text, start);
      members.set(key, { start, end });
      i = skipSpace(text, end);
      if (text[i] === ',') i = skipSpace(text, i + 1);
    }
    objects.push(members);
    i = skipSpace(text, i + 1);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return objects;
}

function scalarOrValueEnd(text: string, start: number): number {
  const c = text[start];
  if (c === '"' || c === '{' || c === '[') return valueEnd(text, start) ?? text.length;
  let i = start;
  while (i < text.length && !/[\s,}\]]/.test(text[i]!)) i++;
  return i;
}
