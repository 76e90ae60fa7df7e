import { z } from 'zod';
import { UpstreamProtocolError } from '../core/errors.ts';
import { dataPreview } from './data-preview.ts';
import type { UpstreamPart } from './upstream-parts.ts';
import { isUpstreamErrorObject } from './upstream-error-message.ts';
import { abortedByUpstreamError, inStreamUpstreamError, UNFINISHED_REASONS } from './upstream-response-error.ts';
import { tokenChoicesEnd, tokenEventLayout, tokenEventsOf, type TokenEvent, type TokenEventLayout } from './token-event-bytes.ts';
import { usageCounts } from './usage-counts.ts';

// Loose objects everywhere: servers add fields (logprobs, stop_reason, token_ids, …) that we
// pass over; only the fields we read are type-checked.
const ToolCallDeltaSchema = z.looseObject({
  // Some servers and proxies send `index: null`; `decode` reads it as a missing index (see
  // #implicitIndex) rather than failing the stream as a malformed chunk. vLLM, SGLang and
  // llama.cpp's server always send the index (DeltaToolCall's required int, SGLang's
  // call_item.tool_index, llama.cpp's tool_call_index), so no guess is made for them.
  index: z.number().int().nonnegative().nullish(),
  id: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const DeltaSchema = z.looseObject({
  content: z.string().nullish(),
  reasoning_content: z.string().nullish(),
  reasoning: z.string().nullish(),
  tool_calls: z.array(ToolCallDeltaSchema).nullish(),
});

const ChoiceSchema = z.looseObject({
  delta: DeltaSchema.nullish(),
  finish_reason: z.string().nullish(),
});

const UsageSchema = z.looseObject({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative().optional(),
});

export const ChatCompletionChunkSchema = z.looseObject({
  id: z.string().optional(),
  model: z.string().optional(),
  created: z.number().optional(),
  choices: z.array(ChoiceSchema).default([]),
  usage: UsageSchema.nullish(),
});

type ChatCompletionChunk = z.output<typeof ChatCompletionChunkSchema>;

function parseChunk(json: unknown, data: string): ChatCompletionChunk {
  const parsed = ChatCompletionChunkSchema.safeParse(json);
  if (!parsed.success) throw new UpstreamProtocolError(`upstream sent a malformed chunk (${z.prettifyError(parsed.error)}): ${dataPreview(data)}`);
  return parsed.data;
}

const optionalString = (v: unknown) => v === undefined || v === null || typeof v === 'string';

/** No usage, or usage as UsageSchema reads it (every chunk has one with `continuous_usage_stats`). */
const isPlainUsage = (usage: unknown) => usage === undefined || usage === null || usageCounts(usage) !== undefined;

/**
 * The shape of nearly every chunk of a stream: one token of content or reasoning, no tool calls.
 * Checked by hand because it is on every token's path, where the zod parse cost about 8% of the
 * gateway's CPU (bench/overhead profile); whatever this does not accept (tool calls, odd fields)
 * goes through the schema, which also words the error.
 */
function isTokenChunk(json: unknown): json is ChatCompletionChunk {
  if (typeof json !== 'object' || json === null) return false;
  const chunk = json as Record<string, unknown>;
  if (!Array.isArray(chunk['choices']) || !isPlainUsage(chunk['usage'])) return false;
  if (!(chunk['id'] === undefined || typeof chunk['id'] === 'string')) return false;
  if (!(chunk['model'] === undefined || typeof chunk['model'] === 'string')) return false;
  if (!(chunk['created'] === undefined || typeof chunk['created'] === 'number')) return false;
  for (const choice of chunk['choices'] as unknown[]) {
    if (typeof choice !== 'object' || choice === null) return false;
    const { delta, finish_reason: finish } = choice as Record<string, unknown>;
    if (!optionalString(finish)) return false;
    if (delta === undefined || delta === null) continue;
    if (typeof delta !== 'object') return false;
    const d = delta as Record<string, unknown>;
    if (!optionalString(d['content']) || !optionalString(d['reasoning_content']) || !optionalString(d['reasoning'])) return false;
    if (d['tool_calls'] !== undefined && d['tool_calls'] !== null) return false;
  }
  return true;
}

/**
 * One token of content and nothing else the decoder reads in its choices: one choice, no finish,
 * and a delta whose every other field is null. A chunk whose choices end as this one's do is then
 * one too (the usage after them, with continuous usage, is read on its own).
 */
function isPlainToken(chunk: ChatCompletionChunk): boolean {
  if (chunk.choices.length !== 1) return false;
  const choice = chunk.choices[0] as Record<string, unknown>;
  const delta = choice['delta'] as Record<string, unknown> | null | undefined;
  if (choice['finish_reason'] != null || typeof delta?.['content'] !== 'string') return false;
  return Object.entries(delta).every(([key, value]) => key === 'content' || value === null);
}

const CONTENT_KEY = '"content":';

/**
 * The text before the content string in a plain token chunk's data, as the server wrote it: the
 * same for every token of a stream, since id, created and model do not change within one. Taken
 * from the data, not written out in one server's field order: vLLM's delta is `{"content":…`,
 * SGLang's `{"role":null,"content":…`. Undefined unless the key is there once, right before a string.
 */
function tokenChunkStart(data: string): string | undefined {
  const at = data.indexOf(CONTENT_KEY);
  // A JSON string holds no unescaped quote: the key found is the delta's, unless it is there twice.
  if (at < 0 || data.indexOf(CONTENT_KEY, at + 1) >= 0) return undefined;
  const open = at + CONTENT_KEY.length;
  return data.charCodeAt(open) === 34 /* " */ ? data.slice(0, open) : undefined;
}

/** Turns the data of SSE events into parts; one decoder per stream (it remembers `start`). */
export class ChatChunkDecoder {
  private readonly requestedModel: string;
  #started = false;
  /** What precedes the content in this stream's token chunks (tokenChunkStart); learned from its first, with #tokenEnd. */
  #tokenStart: string | undefined;
  /** What follows the content in this stream's token chunks (tokenChoicesEnd), and the chunk's closing brace; learned from its first. */
  #tokenEnd: string | undefined;
  /** Both as the bytes of an SSE event (token-event-bytes.ts), built on first use. */
  #tokenLayout: TokenEventLayout | undefined;
  /** The index given to each id of an index-less tool-call fragment, in the order they came (#implicitIndex). */
  readonly #implicitIds = new Map<string, number>();

  constructor(requestedModel: string) {
    this.requestedModel = requestedModel;
  }

  get started(): boolean {
    return this.#started;
  }

  /** Parts carried by one event's data. Throws on an in-stream error object or a malformed chunk. */
  decode(data: string, eventName?: string): UpstreamPart[] {
    const text = eventName === undefined ? this.#tokenText(data) : undefined;
    if (text !== undefined) return text === '' ? [] : [{ type: 'content', text }];
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      // llama.cpp's and some proxies' errors are plain text, or nothing: still this stream's error.
      if (eventName === 'error') throw inStreamUpstreamError(undefined, data);
      throw new UpstreamProtocolError(`upstream sent an SSE event that is not JSON: ${dataPreview(data)}`);
    }
    if (eventName === 'error' || isUpstreamErrorObject(json)) throw inStreamUpstreamError(json, data);
    const chunk = isTokenChunk(json) ? json : parseChunk(json, data);
    const parts: UpstreamPart[] = [];
    if (!this.#started) {
      this.#started = true;
      parts.push({
        type: 'start',
        id: chunk.id ?? '',
        model: chunk.model ?? this.requestedModel,
        created: chunk.created ?? Math.floor(Date.now() / 1000),
      });
    }
    if (this.#tokenEnd === undefined && isPlainToken(chunk)) this.#learnTokenEnd(data);
    // Usage first: on a chunk that also carries a token (continuous_usage_stats) it counts that
    // token, so whoever writes the token on can send the usage with it.
    // The schema has checked the counts: usageCounts reads them, and the details, as the token path does.
    const usage = chunk.usage ? usageCounts(chunk.usage) : undefined;
    if (usage) parts.push({ type: 'usage', usage });
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      // Some vLLM versions send the same text in both `reasoning` and `reasoning_content`; taking
      // one of them keeps it from appearing twice. Those read only `reasoning` back. An empty one
      // beside the other is not the text.
      const reasoning = delta?.reasoning_content || delta?.reasoning;
      if (reasoning) parts.push({ type: 'reasoning', text: reasoning, field: delta?.reasoning ? 'reasoning' : 'reasoning_content' });
      if (delta?.content) parts.push({ type: 'content', text: delta.content });
      delta?.tool_calls?.forEach((call, position) => {
        const part: UpstreamPart = { type: 'tool-call-delta', index: call.index ?? this.#implicitIndex(call, position) };
        if (call.id) part.id = call.id;
        if (call.function?.name) part.name = call.function.name;
        if (call.function?.arguments) part.arguments = call.function.arguments;
        parts.push(part);
      });
      if (choice.finish_reason) {
        if (UNFINISHED_REASONS.has(choice.finish_reason)) throw abortedByUpstreamError(choice.finish_reason);
        parts.push({ type: 'finish', reason: choice.finish_reason, ...stopOf(choice) });
      }
    }
    return parts;
  }

  /**
   * The index of a tool-call fragment sent without one. Gemini's OpenAI layer sends parallel calls
   * one a chunk, each whole with an id of its own, and may split a call's arguments over later
   * fragments without an id: a new id with a name (a call's first fragment) is the next call, a
   * known id its own, and any other fragment belongs to the call last opened (a new id without a
   * name too: some servers change the id on every fragment). Before any id, the fragment's
   * position in its delta is all there is (calls side by side in one delta).
   */
  #implicitIndex(call: { id?: string | null | undefined; function?: { name?: string | null | undefined } | null | undefined }, position: number): number {
    const known = call.id ? this.#implicitIds.get(call.id) : undefined;
    if (known !== undefined) return known;
    if (call.id && call.function?.name) {
      this.#implicitIds.set(call.id, this.#implicitIds.size);
      return this.#implicitIds.size - 1;
    }
    return this.#implicitIds.size > 0 ? this.#implicitIds.size - 1 : position;
  }

  /**
   * Each event of a read made only of this stream's vLLM token events, read from its bytes
   * (token-event-bytes.ts); undefined for any other read, which then goes through the SSE decoder
   * and `decode`. The read must start at an event boundary.
   */
  tokenEvents(read: Buffer): TokenEvent[] | undefined {
    if (this.#tokenStart === undefined || this.#tokenEnd === undefined) return undefined;
    this.#tokenLayout ??= tokenEventLayout(this.#tokenStart, this.#tokenEnd.slice(0, -1));
    return tokenEventsOf(read, this.#tokenLayout);
  }

  /** The start and end of this stream's token chunks, from its first plain one (through the whole parse). */
  #learnTokenEnd(data: string): void {
    const start = tokenChunkStart(data);
    const end = start === undefined ? undefined : tokenChoicesEnd(data, start);
    if (end === undefined) return;
    this.#tokenStart = start;
    this.#tokenEnd = `${end}}`;
  }

  /**
   * A vLLM chunk for one token is the stream's constant start, the content as a JSON string, and
   * a constant end: decoded by parsing that string alone instead of the whole object (on every
   * token's path, the whole parse was the largest self time of ours in the gateway's profile).
   * Anything else (another server's shape, a finish, tool calls, usage) gives undefined and takes
   * the full parse. Exact by construction: when the middle parses as a string, the data is that
   * chunk.
   */
  #tokenText(data: string): string | undefined {
    const start = this.#tokenStart;
    const end = this.#tokenEnd;
    if (start === undefined || end === undefined || !data.startsWith(start) || !data.endsWith(end)) return undefined;
    const middle = data.slice(start.length, data.length - end.length);
    if (middle.charCodeAt(0) !== 34 /* " */) return undefined;
    try {
      const text: unknown = JSON.parse(middle);
      return typeof text === 'string' ? text : undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * What ended the decode: vLLM's `stop_reason`, SGLang's `matched_stop`. A string is the stop string.
 * vLLM's integer is the id of a token in the stop list (the client's `stop_token_ids`, or a model's
 * second end token from its generation_config, Llama 3.1's `<|eom_id|>`): no stop string (it cuts
 * no text), but vLLM's clients read it in the same field, so it is kept to be passed on; its null is
 * the model's own EOS. SGLang's integer is any end token, its EOS included: nothing to pass on.
 */
function stopOf(choice: Record<string, unknown>): { stopString?: string; stopTokenId?: number } {
  const { stop_reason: vllm, matched_stop: sglang } = choice;
  if (typeof vllm === 'string') return { stopString: vllm };
  if (typeof vllm === 'number' && Number.isInteger(vllm)) return { stopTokenId: vllm };
  return typeof sglang === 'string' ? { stopString: sglang } : {};
}

/** The parts of a token event read from bytes: as `decode` gives them for the same chunk. */
export function tokenEventParts(event: TokenEvent): UpstreamPart[] {
  if (typeof event === 'string') return event === '' ? [] : [{ type: 'content', text: event }];
  const usage: UpstreamPart = { type: 'usage', usage: event.usage };
  return event.text === '' ? [usage] : [usage, { type: 'content', text: event.text }];
}

/** Whether a part shows the model producing output (what the first-token timer waits for). */
export function isGenerationPart(part: UpstreamPart): boolean {
  return part.type === 'content' || part.type === 'reasoning' || part.type === 'tool-call-delta' || part.type === 'finish';
}
