import { createCodeFenceParser, type CodeFenceParserOptions } from './code-fence-parser.ts';
import type { ParserEvent, ToolCallParser } from './parser-events.ts';

/**
 * Runs the code-fence parser over the visible text of another format's parser, so a model that
 * makes JSON tool calls *and* writes ```python blocks gets both executed. Only `text` events are
 * fed to the fence parser (a fence inside a tool call's arguments or in reasoning is not prose);
 * every other event passes through in order. Both parsers are split-invariant and the fence
 * parser only sees text, so the composition is too.
 *
 * The inner format comes first, so its markers keep their meaning inside a fence, as in vLLM:
 * models do wrap real calls in ```json blocks, and harmony's or DeepSeek's special tokens end a
 * message wherever they stand. But a call (or reasoning) inside a fenced block that is itself
 * being run takes its characters out of that code: the block's call is then malformed rather
 * than run as code the model never wrote (`print('<tool_call>…</tool_call>')` as `print('')`).
 * Text the inner format gives while one of its calls is open (an LLMCompiler plan's Thought
 * lines) belongs to that call: a fence there is not a second call inside the first.
 */
export function withCodeFences(inner: ToolCallParser, options: CodeFenceParserOptions): ToolCallParser {
  const fences = createCodeFenceParser(options);
  /** The inner format's calls begun and not yet ended. */
  const open = new Set<string>();
  // Refused after end(), as by every parser: a push would run on a finished fence parser, or,
  // while `open` still held a call, skip the fences silently.
  let ended = false;
  const passThrough = (e: ParserEvent, out: ParserEvent[]): void => {
    if (e.type === 'call-start') {
      out.push(...fences.interrupt(`a ${e.name} tool call began inside the code block`));
      open.add(e.callId);
    } else if (e.type === 'reasoning') out.push(...fences.interrupt('reasoning began inside the code block'));
    else if ((e.type === 'call-end' || e.type === 'malformed') && e.callId !== undefined) open.delete(e.callId);
    out.push(e);
  };
  const route = (events: ParserEvent[]): ParserEvent[] => {
    // Most pushes give nothing or one event: no list to build for them.
    if (events.length === 0) return events;
    if (events.length === 1) {
      const e = events[0]!;
      if (e.type === 'text') return open.size === 0 ? fences.push(e.text) : events;
      if (e.type !== 'call-start' && e.type !== 'reasoning' && e.type !== 'call-end' && e.type !== 'malformed') return events;
    }
    const out: ParserEvent[] = [];
    for (const e of events) {
      if (e.type === 'text' && open.size === 0) out.push(...fences.push(e.text));
      else passThrough(e, out);
    }
    return out;
  };
  return {
    push: (delta) => {
      if (ended) throw new Error('push() after end()');
      return route(inner.push(delta));
    },
    // An argument fragment is not text: route would pass it through and the fences never see it.
    pushFast: (delta) => {
      if (ended) throw new Error('push() after end()');
      const events = inner.pushFast ? inner.pushFast(delta) : inner.push(delta);
      return typeof events === 'string' ? events : route(events);
    },
    end: (cut = false) => {
      if (ended) return [];
      ended = true;
      const out = [...route(inner.end(cut))];
      // Every format ends its open call at end(); one that did not would leave its consumers a
      // call that never ends, so it is closed here, and nothing stays open once this has ended.
      for (const callId of open) out.push({ type: 'malformed', callId, reason: 'the output ended inside the call' });
      open.clear();
      return [...out, ...fences.end(cut)];
    },
  };
}
