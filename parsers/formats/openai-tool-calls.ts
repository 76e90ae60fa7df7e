import { z } from 'zod';
import type { ToolCallDeltaPart } from '../../llm-client/upstream-parts.ts';
import { knownString } from '../known-string.ts';
import type { ParserEvent, ToolCallParser } from '../parser-events.ts';
import { CallOptionsSchema, CallRegistry, parseFormatOptions } from './call-options.ts';
import { EventList, type Carry } from './event-list.ts';
import { JsonArguments } from './json-arguments.ts';

export const OpenAIToolCallsOptionsSchema = CallOptionsSchema.extend({
  /** Use the upstream's call ids (when it sends them) instead of callIdPrefix + counter. */
  upstreamIds: z.boolean().default(false),
}).strict();
export type OpenAIToolCallsOptions = z.input<typeof OpenAIToolCallsOptionsSchema>;

/** A tool-call fragment as an OpenAI-compatible server streams it in `delta.tool_calls`. */
export type ToolCallDelta = Pick<ToolCallDeltaPart, 'index' | 'id' | 'name' | 'arguments'>;

/** The same events as the text formats, for upstreams that parse tool calls server-side. */
export interface OpenAIToolCallsParser extends ToolCallParser {
  /** Content text, passed through unchanged. */
  push(delta: string): ParserEvent[];
  pushToolCallDelta(part: ToolCallDelta): ParserEvent[];
  /** The upstream's finish_reason: every open call ends here ("length" as at endCut()). */
  finish(reason: string): ParserEvent[];
  /**
   * The end of a stream the token limit cut: an open call with no arguments yet was cut after
   * its name (not `{}`, as at end()), and one with partial arguments is malformed as at end().
   */
  endCut(): ParserEvent[];
}

interface Call {
  index: number;
  callId: string | undefined;
  upstreamId: string | undefined;
  name: string | undefined;
  /** Argument text that arrived before the name. */
  early: string;
  args: JsonArguments | undefined;
  /** Set once the call has ended, failed or been refused: later fragments are ignored. */
  closed: boolean;
  /** Whitespace before the arguments object went out as call-args (it alone does not parse). */
  leadingWhitespace: boolean;
}

/**
 * Adapts `delta.tool_calls` fragments ({index, id?, name?, arguments?}) to parser events:
 * call-start when the name arrives (the name comes whole, as OpenAI, vLLM and SGLang send it:
 * a different name for the same call later is `malformed`; argument text before it is queued), call-args with each fragment exactly as received, field
 * and line pieces through the incremental scanner, and call-end only at an explicit boundary —
 * a fragment for the next index, finish(), or end() — never because the arguments parse.
 * A call whose arguments are incomplete at that boundary (max_tokens) is `malformed`; so is
 * non-whitespace after its closing brace, a fragment for a call that already ended, or (with a
 * `tools` whitelist) an unknown name. Arguments that are empty or only whitespace mean `{}`.
 */
export function createOpenAIToolCallsParser(options: OpenAIToolCallsOptions = {}): OpenAIToolCallsParser {
  return new OpenAIToolCalls(parseFormatOptions(OpenAIToolCallsOptionsSchema, options, 'openai-tool-calls'));
}

class OpenAIToolCalls implements OpenAIToolCallsParser {
  readonly #registry: CallRegistry;
  readonly #upstreamIds: boolean;
  readonly #upstreamIdsUsed = new Set<string>();
  readonly #calls = new Map<number, Call>();
  #current: Call | undefined;
  #carry: Carry | undefined;
  #ended = false;
  /** #plainFragment's event list, reused (empty between fragments). */
  readonly #plainOut = new EventList();

  constructor(options: z.output<typeof OpenAIToolCallsOptionsSchema>) {
    this.#registry = new CallRegistry(options);
    this.#upstreamIds = options.upstreamIds;
  }

  // Each entry point opens its EventList with #open and hands it over with #take, without a
  // closure per call: this runs once per streamed fragment.
  push(delta: string): ParserEvent[] {
    const out = this.#open();
    out.text(delta);
    return this.#take(out);
  }

  pushToolCallDelta(part: ToolCallDelta): ParserEvent[] {
    const fast = this.#plainFragment(part);
    if (fast !== undefined) return fast;
    const out = this.#open();
    this.#toolCallDelta(part, out);
    return this.#take(out);
  }

  finish(reason: string): ParserEvent[] {
    const out = this.#open();
    // "length" is the token limit: what endCut() reads it as, whichever the caller reports.
    if (reason === 'length') this.#refuseCutAfterName(out);
    this.#closeCurrent(out);
    return this.#take(out);
  }

  end(): ParserEvent[] {
    if (this.#ended) return [];
    const out = this.#open();
    this.#closeCurrent(out);
    this.#ended = true;
    return out.events;
  }

  endCut(): ParserEvent[] {
    if (this.#ended) return [];
    const out = this.#open();
    this.#refuseCutAfterName(out);
    this.#closeCurrent(out);
    this.#ended = true;
    return out.events;
  }

  /** Arguments that close their object are whole; none at all is a call the token limit cut after its name. */
  #refuseCutAfterName(out: EventList): void {
    const call = this.#current;
    if (call !== undefined && !call.closed && call.name !== undefined && !call.args!.started) this.#malformed(call, 'truncated: the token limit cut the call before its arguments', out);
  }

  /**
   * The commonest fragment, one more token of the current call's arguments inside a string
   * (IncrementalJsonScanner.writePlain), without a new EventList: its events, or undefined
   * (nothing consumed) for the general path.
   */
  #plainFragment(part: ToolCallDelta): ParserEvent[] | undefined {
    const call = this.#current;
    const text = part.arguments;
    if (this.#ended || call === undefined || text === undefined || this.#carry !== undefined || part.index !== call.index || call.closed) return undefined;
    const args = call.args;
    if (args === undefined || !args.started) return undefined;
    const out = this.#plainOut;
    const callId = args.writePlain(text, out);
    if (callId === undefined) return undefined;
    // As the general path does with the rest of the fragment (the name is already known).
    if (part.id) call.upstreamId ??= part.id;
    if (callId !== '') {
      if (text.length === 0) return [];
      const last = text.charCodeAt(text.length - 1);
      if (last < 0xd800 || last > 0xdbff) return [{ type: 'call-args', callId, text }];
      out.args(callId, text);
    }
    this.#carry = out.takeCarry();
    return out.take();
  }

  #open(): EventList {
    if (this.#ended) throw new Error('push after end()');
    const out = new EventList(this.#carry);
    this.#carry = undefined;
    return out;
  }

  /** The push's events; a trailing half character is kept for the next one. */
  #take(out: EventList): ParserEvent[] {
    this.#carry = out.takeCarry();
    return out.events;
  }

  #toolCallDelta(part: ToolCallDelta, out: EventList): void {
    let call = this.#calls.get(part.index);
    // An id comes only on a call's first fragment (or the same one again): a different one with a
    // name, at a used index, is the next call. Ollama numbers every parallel call 0, and a missing
    // index is read as 0 (llm-client), so the second call would join the first and break both.
    // Only once the call's arguments have closed (or it failed): some servers change the id on
    // every fragment, some repeat the name too. (Never so on the fast path, inside open arguments.)
    // With no id at all, a different name after whole arguments is the next call too: a name sent
    // in pieces comes before the arguments, and refusing it lost both calls.
    const next = isNewId(call, part.id) || (!part.id && call?.name !== undefined && part.name !== call.name);
    if (call !== undefined && part.name && next && (call.closed || call.args?.status === 'complete')) call = undefined;
    if (call !== this.#current && this.#current) this.#close(this.#current, out);
    if (!call) {
      call = { index: part.index, callId: undefined, upstreamId: undefined, name: undefined, early: '', args: undefined, closed: false, leadingWhitespace: false };
      this.#calls.set(part.index, call);
    } else if (call.closed) {
      // The rest of the current call, already refused or broken (reported once), is ignored: it
      // stays current, or its next fragment would read as one for an ended call. A fragment for
      // an earlier call is news; its events are over, so this one names no call id.
      if (call !== this.#current) {
        out.push({ type: 'malformed', reason: `fragment for tool call ${part.index}, which has ended` });
        this.#current = undefined;
      }
      return;
    }
    this.#current = call;
    if (part.id) call.upstreamId ??= part.id;
    if (part.name !== undefined && part.name.length > 0) {
      if (call.name === undefined) this.#start(call, part.name, out);
      // A name sent in pieces would run the tool named by its first: the call is refused instead.
      // The same name again (some servers repeat it on every fragment) is no news.
      else if (part.name !== call.name) return this.#malformed(call, `tool call ${part.index}'s name came in pieces (${JSON.stringify(call.name)}, then ${JSON.stringify(part.name)}): it must arrive whole`, out);
    }
    if (part.arguments !== undefined && !call.closed) {
      if (call.args) this.#args(call, part.arguments, out);
      else call.early += part.arguments;
    }
  }

  #start(call: Call, name: string, out: EventList): void {
    call.name = name;
    const rejection = this.#registry.rejection(name);
    if (rejection !== undefined) {
      this.#malformed(call, rejection, out);
      return;
    }
    // An upstream id used twice would name two calls: the second gets one of the gateway's.
    const upstreamId = this.#upstreamIds && call.upstreamId && !this.#upstreamIdsUsed.has(call.upstreamId) ? call.upstreamId : undefined;
    if (upstreamId !== undefined) this.#upstreamIdsUsed.add(upstreamId);
    call.callId = upstreamId ?? this.#registry.nextCallId();
    out.push({ type: 'call-start', callId: call.callId, name });
    call.args = new JsonArguments(call.callId, { lineField: this.#registry.lineField(name), maxFieldDepth: this.#registry.maxFieldDepth });
    if (call.early.length > 0) this.#args(call, call.early, out);
    call.early = '';
  }

  #args(call: Call, text: string, out: EventList): void {
    text = knownString(text);
    const args = call.args!;
    let i = 0;
    while (i < text.length) {
      if (!args.started || args.status === 'complete') {
        // Whitespace around the object is raw argument text, but not part of the JSON value.
        let j = i;
        while (j < text.length && isWhitespace(text.charCodeAt(j))) j++;
        out.args(call.callId!, text.slice(i, j));
        if (j > i && !args.started) call.leadingWhitespace = true;
        if (j === text.length) return;
        if (args.status === 'complete') {
          this.#malformed(call, 'text after the arguments object', out);
          return;
        }
        i = j;
      }
      i = args.write(text, i, text.length, out);
      if (args.status === 'failed') {
        this.#malformed(call, args.failure, out);
        return;
      }
    }
  }

  #closeCurrent(out: EventList): void {
    if (this.#current) this.#close(this.#current, out);
    this.#current = undefined;
  }

  #close(call: Call, out: EventList): void {
    if (call.closed) return;
    if (call.name === undefined) {
      this.#malformed(call, 'tool call without a name', out);
      return;
    }
    const args = call.args!;
    if (!args.started) {
      call.closed = true;
      // Only whitespace came: it went out as call-args, and the fragments must still parse to {}.
      if (call.leadingWhitespace) out.args(call.callId!, '{}');
      out.push({ type: 'call-end', callId: call.callId!, args: {} });
      return;
    }
    if (args.status === 'pending') args.end();
    if (args.status === 'complete') {
      call.closed = true;
      out.push({ type: 'call-end', callId: call.callId!, args: args.args });
    } else {
      this.#malformed(call, args.failure, out);
    }
  }

  #malformed(call: Call, reason: string, out: EventList): void {
    call.closed = true;
    out.push(call.callId === undefined ? { type: 'malformed', reason } : { type: 'malformed', callId: call.callId, reason });
  }
}

/** Whether `id` names a call other than `call`; an empty id (some servers send "" after the first fragment) is none. */
function isNewId(call: Call | undefined, id: string | undefined): boolean {
  return call !== undefined && id !== undefined && id !== '' && call.upstreamId !== undefined && id !== call.upstreamId;
}

function isWhitespace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}
