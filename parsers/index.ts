import { InvalidRequestError } from '../core/errors.ts';
import { createCodeFenceParser, type CodeFenceParserOptions } from './code-fence-parser.ts';
import type { ToolCallParser } from './parser-events.ts';

/** Every output format the gateway can parse; adding a format is one line here. */
const parserFactories = {
  'code-fence': (options?: CodeFenceParserOptions) => createCodeFenceParser(options),
} satisfies Record<string, (options?: never) => ToolCallParser>;

export type ParserFormat = keyof typeof parserFactories;
export type ParserOptions<F extends ParserFormat> = Parameters<(typeof parserFactories)[F]>[0];

export const PARSER_FORMATS = Object.keys(parserFactories) as ParserFormat[];

/** A fresh parser (one per generation) for `format`. */
export function createParser<F extends ParserFormat>(format: F, options?: ParserOptions<F>): ToolCallParser {
  // Formats often come from config files, where the type system has no say.
  if (!Object.hasOwn(parserFactories, format)) {
    throw new InvalidRequestError(`unknown parser format "${String(format)}"; known: ${PARSER_FORMATS.join(', ')}`, 'format');
  }
  const factory: (options?: ParserOptions<F>) => ToolCallParser = parserFactories[format];
  return factory(options);
}

export type { ParserEvent, Piece, ToolCallParser } from './parser-events.ts';
export { coalesceText } from './parser-events.ts';
export type { CodeFenceParserOptions } from './code-fence-parser.ts';
