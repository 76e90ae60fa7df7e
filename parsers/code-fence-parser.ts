import { z } from 'zod';
import type { ParserEvent, ToolCallParser } from './parser-events.ts';
import { EventList } from './formats/event-list.ts';
import { knownString } from './known-string.ts';
import { validateParserOptions } from './formats/parser-options.ts';
import { fenceLanguage, isClosingFence, parseOpeningFence, removeIndent, type Fence } from './markdown-fence.ts';

/**
 * A language a block can be in: one word. A fence's language is the first word of its info string
 * (markdown-fence.ts fenceLanguage), and a fence is one line, so a language with a space, a tab or
 * a line break in it could never match (```python 3 is a python block): a parser built with
 * "python 3" ran no block at all. The gateway's config refuses it with the same words.
 */
export const FenceLanguageSchema = z
  .string()
  .min(1)
  .refine((language) => !/[ \t\n]/.test(language), {
    error: (issue) => `${JSON.stringify(issue.input)} can never match: a fence's language is the first word of its info string (\`\`\`python 3 is a python block); give one word`,
  });

export const CodeFenceParserOptionsSchema = z
  .object({
    /** The tool each recognised block calls. */
    toolName: z.string().min(1).default('python'),
    /** Info-string languages (first word, compared case-insensitively) that make a block a call. */
    languages: z.array(FenceLanguageSchema).default(['python', 'py', 'python3']),
    /** Whether a fence with no info string is a call too. */
    bareFence: z.boolean().default(false),
    /** Call ids are this prefix plus a per-parser counter (1, 2, …), so they are deterministic. */
    callIdPrefix: z.string().default('call_'),
  })
  .strict();

export type CodeFenceParserOptions = z.input<typeof CodeFenceParserOptionsSchema>;

type Block =
  | { kind: 'prose' }
  /** A fenced block that is not a call: until its closing fence, no line in it opens anything. */
  | { kind: 'other'; fence: Fence }
  | { kind: 'call'; fence: Fence; callId: string; lineNo: number; code: string };

/**
 * Recognises markdown code blocks in a given language as tool calls, the way CommonMark reads
 * them, while the text streams in.
 *
 * Nothing is swallowed: every character comes out as `text` (the user sees the markdown), and
 * the call events sit at the exact character where each becomes certain, which is always just
 * after a "\n" (or at `end()`):
 * - `call-start` after the opening fence line;
 * - `call-piece` (kind `line`, with its "\n") after each code line, since only a complete line
 *   can be told apart from a closing fence;
 * - `call-end` after the closing fence line, or at `end()` for an unclosed block (CommonMark runs
 *   it to the end of the document, so a truncated call fails as Python would fail on it).
 * Because events only fall on line ends, text within a line is never held back; the one
 * exception is a trailing lone high surrogate, kept until its pair arrives so no text event
 * ever carries half a character.
 */
export function createCodeFenceParser(options: CodeFenceParserOptions = {}): CodeFenceParser {
  return new CodeFenceParserImpl(validateParserOptions(CodeFenceParserOptionsSchema, options, 'code-fence'));
}

export interface CodeFenceParser extends ToolCallParser {
  /**
   * Something other than text has taken characters out of the stream this parser sees (an
   * enclosing format's tool call): a block being executed no longer holds the code the model
   * wrote, so its call is malformed, and its remaining lines are shown but not run.
   */
  interrupt(reason: string): ParserEvent[];
}

class CodeFenceParserImpl implements CodeFenceParser {
  readonly #options: z.output<typeof CodeFenceParserOptionsSchema>;
  readonly #languages: Set<string>;
  #block: Block = { kind: 'prose' };
  /** The current physical line so far, without its "\n". */
  #line = '';
  /** Text not yet emitted: only ever a trailing high surrogate. */
  #held = '';
  #calls = 0;
  #ended = false;
  /** Reused across pushes (each push takes its events): one object less to allocate per delta. */
  readonly #out = new EventList();

  constructor(options: z.output<typeof CodeFenceParserOptionsSchema>) {
    this.#options = options;
    this.#languages = new Set(options.languages.map((l) => l.toLowerCase()));
  }

  push(delta: string): ParserEvent[] {
    if (this.#ended) throw new Error('push() after end()');
    delta = knownString(delta);
    const out = this.#out;
    // The commonest delta: a token in the middle of a line, which is just more text of it. Its
    // event built directly, without the list's merging and carrying (nothing to merge or carry).
    if (this.#held === '' && delta.length !== 0 && out.empty && delta.indexOf('\n') === -1) {
      const last = delta.charCodeAt(delta.length - 1);
      if (!isHighSurrogate(last)) {
        this.#line += delta;
        return [{ type: 'text', text: delta }];
      }
    }
    let text = this.#held;
    this.#held = '';
    let from = 0;
    for (let newline = delta.indexOf('\n'); newline !== -1; newline = delta.indexOf('\n', from)) {
      this.#line += delta.slice(from, newline);
      out.text(text + delta.slice(from, newline + 1));
      text = '';
      this.#lineEnded(out);
      this.#line = '';
      from = newline + 1;
    }
    const rest = from === 0 ? delta : delta.slice(from);
    this.#line += rest;
    text += rest;
    if (text.length > 0 && isHighSurrogate(text.charCodeAt(text.length - 1))) {
      this.#held = text.slice(-1);
      text = text.slice(0, -1);
    }
    out.text(text);
    return out.take();
  }

  end(cut = false): ParserEvent[] {
    if (this.#ended) return [];
    this.#ended = true;
    const out = this.#out;
    out.text(this.#held);
    this.#held = '';
    const block = this.#block;
    if (block.kind === 'call') {
      const line = this.#line;
      const closed = line.length > 0 && isClosingFence(line, block.fence);
      // Cut inside the block (not at its closing fence): the model had not finished the code, so
      // its last line, likely half a statement, is not run and the call is not one.
      if (cut && !closed) out.push({ type: 'malformed', callId: block.callId, reason: 'truncated call' });
      else {
        if (line.length > 0 && !closed) this.#piece(out, block, removeIndent(line, block.fence.indent));
        out.push({ type: 'call-end', callId: block.callId, args: { code: block.code } });
      }
    }
    this.#block = { kind: 'prose' };
    return out.take();
  }

  interrupt(reason: string): ParserEvent[] {
    const block = this.#block;
    if (this.#ended || block.kind !== 'call') return [];
    const out = this.#out;
    // A held high surrogate came before the interruption; its pair can no longer follow it.
    out.text(this.#held);
    this.#held = '';
    out.push({ type: 'malformed', callId: block.callId, reason });
    // Still a block until its closing fence, so that fence opens nothing.
    this.#block = { kind: 'other', fence: block.fence };
    return out.take();
  }

  #lineEnded(out: EventList): void {
    const line = this.#line;
    const block = this.#block;
    switch (block.kind) {
      case 'prose': {
        const fence = parseOpeningFence(line);
        if (fence === undefined) return;
        if (!this.#isCall(fence)) {
          this.#block = { kind: 'other', fence };
          return;
        }
        this.#calls += 1;
        const callId = `${this.#options.callIdPrefix}${this.#calls}`;
        this.#block = { kind: 'call', fence, callId, lineNo: 0, code: '' };
        out.push({ type: 'call-start', callId, name: this.#options.toolName });
        return;
      }
      case 'other':
        if (isClosingFence(line, block.fence)) this.#block = { kind: 'prose' };
        return;
      case 'call':
        if (isClosingFence(line, block.fence)) {
          out.push({ type: 'call-end', callId: block.callId, args: { code: block.code } });
          this.#block = { kind: 'prose' };
        } else {
          this.#piece(out, block, `${removeIndent(line, block.fence.indent)}\n`);
        }
        return;
    }
  }

  #piece(out: EventList, block: Extract<Block, { kind: 'call' }>, text: string): void {
    block.lineNo += 1;
    block.code += text;
    out.push({ type: 'call-piece', callId: block.callId, piece: { kind: 'line', text, lineNo: block.lineNo } });
  }

  #isCall(fence: Fence): boolean {
    if (fence.info === '') return this.#options.bareFence;
    return this.#languages.has(fenceLanguage(fence).toLowerCase());
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
