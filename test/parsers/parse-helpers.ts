import { createCodeFenceParser, type CodeFenceParserOptions } from '../../parsers/code-fence-parser.ts';
import { coalesceText, type ParserEvent } from '../../parsers/parser-events.ts';

/** Feeds `deltas` to a fresh code-fence parser and returns every event, `end()` included. */
export function parseDeltas(deltas: readonly string[], options?: CodeFenceParserOptions): ParserEvent[] {
  const parser = createCodeFenceParser(options);
  const events: ParserEvent[] = [];
  for (const delta of deltas) events.push(...parser.push(delta));
  events.push(...parser.end());
  return events;
}

/** The coalesced events of the whole text in one delta. */
export function parseWhole(text: string, options?: CodeFenceParserOptions): ParserEvent[] {
  return coalesceText(parseDeltas([text], options));
}

export function textOf(events: readonly ParserEvent[]): string {
  return events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');
}

/** Code of every call, in order, as carried by call-end. */
export function codesOf(events: readonly ParserEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'call-end' ? [e.args.code as string] : []));
}

export const text = (t: string): ParserEvent => ({ type: 'text', text: t });
export const start = (callId = 'call_1', name = 'python'): ParserEvent => ({ type: 'call-start', callId, name });
export const line = (t: string, lineNo: number, callId = 'call_1'): ParserEvent => ({
  type: 'call-piece',
  callId,
  piece: { kind: 'line', text: t, lineNo },
});
export const end = (code: string, callId = 'call_1'): ParserEvent => ({ type: 'call-end', callId, args: { code } });
