import { createCodeFenceParser, type CodeFenceParserOptions } from './code-fence-parser.ts';
import type { ParserEvent, ToolCallParser } from './parser-events.ts';

/**
 * Runs the code-fence parser over the visible text of another format's parser, so a model that
 * makes JSON tool calls *and* writes ```python blocks gets both executed. Only `text` events are
 * fed to the fence parser (a fence inside a tool call's arguments or in reasoning is not prose);
 * every other event passes through in order. Both parsers are split-invariant and the fence
 * parser only sees text, so the composition is too.
 */
export function withCodeFences(inner: ToolCallParser, options: CodeFenceParserOptions): ToolCallParser {
  const fences = createCodeFenceParser(options);
  const route = (events: ParserEvent[]): ParserEvent[] => {
    // Most pushes give nothing or one event: no list to build for them.
    if (events.length === 0) return events;
    if (events.length === 1) return events[0]!.type === 'text' ? fences.push(events[0]!.text) : events;
    const out: ParserEvent[] = [];
    for (const e of events) {
      if (e.type === 'text') out.push(...fences.push(e.text));
      else out.push(e);
    }
    return out;
  };
  return {
    push: (delta) => route(inner.push(delta)),
    // An argument fragment is not text: route would pass it through and the fences never see it.
    pushFast: (delta) => {
      const events = inner.pushFast ? inner.pushFast(delta) : inner.push(delta);
      return typeof events === 'string' ? events : route(events);
    },
    end: () => [...route(inner.end()), ...fences.end()],
  };
}
