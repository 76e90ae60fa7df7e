/**
 * CommonMark fenced-code-block lines (spec 0.31, "Fenced code blocks"), judged one physical line
 * at a time. Written without regular expressions: `^`/`$` with the m flag also match at U+2028,
 * and `\s` matches far more than the spaces and tabs the spec means.
 */
export interface Fence {
  char: '`' | '~';
  /** Number of fence characters (>= 3); a closing fence needs at least as many. */
  length: number;
  /** Spaces before the fence (0-3); removed from each content line, as CommonMark does. */
  indent: number;
  /** The info string, trimmed of spaces and tabs. */
  info: string;
}

/** The opening fence on `line` (without its "\n"; a trailing "\r" is a line ending), if any. */
export function parseOpeningFence(line: string): Fence | undefined {
  const text = withoutCarriageReturn(line);
  const indent = leadingSpaces(text);
  if (indent > 3) return undefined;
  const char = text[indent];
  if (char !== '`' && char !== '~') return undefined;
  const length = runLength(text, indent, char);
  if (length < 3) return undefined;
  const info = trimSpacesAndTabs(text.slice(indent + length));
  // A backtick fence's info string may not contain backticks, so "```x```" stays inline code.
  if (char === '`' && info.includes('`')) return undefined;
  return { char, length, indent, info };
}

/** Whether `line` closes a block opened by `fence`. */
export function isClosingFence(line: string, fence: Fence): boolean {
  const text = withoutCarriageReturn(line);
  const indent = leadingSpaces(text);
  if (indent > 3) return false;
  const length = runLength(text, indent, fence.char);
  if (length < fence.length) return false;
  for (let i = indent + length; i < text.length; i++) {
    if (text[i] !== ' ' && text[i] !== '\t') return false;
  }
  return true;
}

/** The info string's first word: the language. */
export function fenceLanguage(fence: Fence): string {
  let end = 0;
  while (end < fence.info.length && fence.info[end] !== ' ' && fence.info[end] !== '\t') end++;
  return fence.info.slice(0, end);
}

/** Removes up to `count` leading spaces (spaces only, per the spec). */
export function removeIndent(line: string, count: number): string {
  return line.slice(Math.min(count, leadingSpaces(line)));
}

function withoutCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

function leadingSpaces(text: string): number {
  let n = 0;
  while (text[n] === ' ') n++;
  return n;
}

function runLength(text: string, from: number, char: string): number {
  let n = 0;
  while (text[from + n] === char) n++;
  return n;
}

function trimSpacesAndTabs(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text[start] === ' ' || text[start] === '\t')) start++;
  while (end > start && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
  return text.slice(start, end);
}
