import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { createCodeFenceParser } from '../../parsers/code-fence-parser.ts';
import { createParser, PARSER_FORMATS } from '../../parsers/index.ts';
import { codesOf, end, line, parseDeltas, parseWhole, start, text, textOf } from './parse-helpers.ts';

/** Every test also checks that no model text is swallowed. */
function parse(input: string, options?: Parameters<typeof parseWhole>[1]) {
  const events = parseWhole(input, options);
  expect(textOf(events)).toBe(input);
  return events;
}

describe('code-fence parser: recognising calls', () => {
  it('emits a call between the text before and after one block, each event at its line end', () => {
    const input = 'Let me compute that.\n\n```python\nx = 2 + 2\nprint(x)\n```\n\nThe answer is **4**.';
    expect(parse(input)).toEqual([
      text('Let me compute that.\n\n```python\n'),
      start(),
      text('x = 2 + 2\n'),
      line('x = 2 + 2\n', 1),
      text('print(x)\n'),
      line('print(x)\n', 2),
      text('```\n'),
      end('x = 2 + 2\nprint(x)\n'),
      text('\nThe answer is **4**.'),
    ]);
  });

  it('makes each block its own call with its own deterministic id', () => {
    const input = [
      'First load the data:',
      '```python',
      'import json',
      'data = json.loads(raw)',
      '```',
      'Then summarise it:',
      '```py',
      'print(len(data))',
      '```',
      '',
    ].join('\n');
    const events = parse(input, { callIdPrefix: 'call_r2_' });
    expect(events.filter((e) => e.type === 'call-start')).toEqual([start('call_r2_1'), start('call_r2_2')]);
    expect(codesOf(events)).toEqual(['import json\ndata = json.loads(raw)\n', 'print(len(data))\n']);
    expect(events.filter((e) => e.type === 'call-piece').map((e) => e.type === 'call-piece' && [e.callId, e.piece])).toEqual([
      ['call_r2_1', { kind: 'line', text: 'import json\n', lineNo: 1 }],
      ['call_r2_1', { kind: 'line', text: 'data = json.loads(raw)\n', lineNo: 2 }],
      ['call_r2_2', { kind: 'line', text: 'print(len(data))\n', lineNo: 1 }],
    ]);
  });

  it.each([
    ['```py\n', true],
    ['```python3\n', true],
    ['```Python\n', true],
    ['``` python\n', true],
    ['```python title="demo.py"\n', true],
    ['```python\t\n', true],
    ['```js\n', false],
    ['```pycon\n', false],
    ['```python-repl\n', false],
    ['```\n', false],
  ])('language of %j: call = %s', (fence, isCall) => {
    const events = parse(`${fence}print(1)\n\`\`\`\n`);
    expect(codesOf(events)).toEqual(isCall ? ['print(1)\n'] : []);
  });

  it('uses the configured tool name and languages', () => {
    const events = parse('```sh\nls -la\n```\n', { toolName: 'shell', languages: ['sh', 'bash'] });
    expect(events.filter((e) => e.type !== 'text')).toEqual([start('call_1', 'shell'), line('ls -la\n', 1), end('ls -la\n')]);
    expect(codesOf(parse('```python\nx\n```\n', { languages: ['sh'] }))).toEqual([]);
  });

  it('treats a bare fence as a call only when enabled', () => {
    const input = 'Run:\n```\nprint("hi")\n```\n';
    expect(codesOf(parse(input))).toEqual([]);
    expect(codesOf(parse(input, { bareFence: true }))).toEqual(['print("hi")\n']);
  });

  it('accepts tilde fences, where backtick lines are code', () => {
    const input = '~~~python\nprint("```")\n```\n~~~\nafter\n';
    expect(codesOf(parse(input))).toEqual(['print("```")\n```\n']);
    // A tilde fence's info string may contain backticks.
    expect(codesOf(parse('~~~python `x`\npass\n~~~\n'))).toEqual(['pass\n']);
  });

  it('closes a 4-backtick block only with 4 or more backticks', () => {
    const input = '````python\ndoc = """\n```python\nx = 1\n```\n"""\n````\n';
    expect(codesOf(parse(input))).toEqual(['doc = """\n```python\nx = 1\n```\n"""\n']);
    expect(codesOf(parse('```python\npass\n`````\ntext\n'))).toEqual(['pass\n']);
  });

  it('ignores python fences inside a block of another language', () => {
    const input = 'Example answer:\n````markdown\n```python\nprint(1)\n```\n````\nDone.\n';
    expect(parse(input)).toEqual([text(input)]);
  });

  it('allows up to 3 spaces of fence indentation and removes that much from each code line', () => {
    const input = '1. Compute:\n\n   ```python\n   if x:\n       y()\n  z = 1\n   ```\n';
    expect(codesOf(parse(input))).toEqual(['if x:\n    y()\nz = 1\n']);
    expect(codesOf(parse('    ```python\n    x = 1\n    ```\n'))).toEqual([]);
    // The closing fence may be indented independently of the opening one.
    expect(codesOf(parse('```python\nx = 1\n   ```\n'))).toEqual(['x = 1\n']);
    expect(codesOf(parse('```python\nx = 1\n    ```\n'))).toEqual(['x = 1\n    ```\n']);
  });

  it('closes only on a line of fence characters followed by spaces or tabs', () => {
    expect(codesOf(parse('```python\nx = 1\n``` \t\nafter\n'))).toEqual(['x = 1\n']);
    expect(codesOf(parse('```python\nx = 1\n``` python\n```\n'))).toEqual(['x = 1\n``` python\n']);
    expect(codesOf(parse('```python\nx = 1\n``\n~~~\n```\n'))).toEqual(['x = 1\n``\n~~~\n']);
  });

  it('does not take a fence inside a line, or inline code, for a block', () => {
    const input = 'Use ```python``` blocks, e.g. text ```python\nprint(1)\n```python```\nend\n';
    expect(codesOf(parse(input))).toEqual([]);
  });

  it('ends a block at a line of backticks inside a Python string, as CommonMark does', () => {
    const input = 'Here:\n```python\ns = """\n```\n"""\nprint(s)\n```\nDone.\n';
    const events = parse(input);
    // The call's code is a truncated string, which Python will report as a SyntaxError; the
    // last ``` then opens a bare (non-call) block that runs to the end.
    expect(codesOf(events)).toEqual(['s = """\n']);
    expect(events.filter((e) => e.type === 'call-start')).toHaveLength(1);
  });
});

describe('code-fence parser: line endings and characters', () => {
  it('keeps CRLF inside each line piece', () => {
    const input = 'Sure:\r\n```python\r\nx = 1\r\nprint(x)\r\n```\r\nok';
    const events = parse(input);
    expect(events.filter((e) => e.type !== 'text')).toEqual([
      start(),
      line('x = 1\r\n', 1),
      line('print(x)\r\n', 2),
      end('x = 1\r\nprint(x)\r\n'),
    ]);
  });

  it('splits only on "\\n": U+2028, U+2029 and lone "\\r" stay inside a line', () => {
    const input = '```python\ns = "a\u2028```\u2029b\rc"\n```\n';
    expect(codesOf(parse(input))).toEqual(['s = "a\u2028```\u2029b\rc"\n']);
    expect(codesOf(parse('x\u2028```python\nprint(1)\n```\n'))).toEqual([]);
  });

  it('passes unicode through unchanged', () => {
    const input = '计算：\n```python\nprint("héllo 👋🏽 你好")\n```\n✅ 完成';
    expect(codesOf(parse(input))).toEqual(['print("héllo 👋🏽 你好")\n']);
  });

  it('never emits half a surrogate pair, holding a high surrogate until its pair arrives', () => {
    const parser = createCodeFenceParser();
    expect(parser.push('a\uD83D')).toEqual([text('a')]);
    expect(parser.push('\uDE00b')).toEqual([text('😀b')]);
    expect(parser.push('\uD83D')).toEqual([]);
    expect(parser.end()).toEqual([text('\uD83D')]);
  });
});

describe('code-fence parser: end of generation', () => {
  it('flushes the last partial line of an unclosed block as a piece without newline, then ends the call', () => {
    const input = 'Working on it:\n```python\nfor i in range(3):\n    print(i'; // the output ended here (no cut)
    expect(parse(input).filter((e) => e.type !== 'text')).toEqual([
      start(),
      line('for i in range(3):\n', 1),
      line('    print(i', 2),
      end('for i in range(3):\n    print(i'),
    ]);
  });

  it('ends an unclosed block whose text ended with a newline, or with a closing fence without one', () => {
    expect(parse('```python\nx = 1\n').filter((e) => e.type !== 'text')).toEqual([start(), line('x = 1\n', 1), end('x = 1\n')]);
    expect(parse('```python\nx = 1\n```').filter((e) => e.type !== 'text')).toEqual([start(), line('x = 1\n', 1), end('x = 1\n')]);
    expect(parse('```python\n').filter((e) => e.type !== 'text')).toEqual([start(), end('')]);
  });

  it('makes a block the token limit cut a malformed call, its half line not run; one cut at its closing fence is whole', () => {
    const parser = createCodeFenceParser();
    const events = [...parser.push('```python\nx = 1\ny = [x *'), ...parser.end(true)].filter((e) => e.type !== 'text');
    expect(events).toEqual([start(), line('x = 1\n', 1), { type: 'malformed', callId: 'call_1', reason: 'truncated call' }]);
    const closed = createCodeFenceParser();
    expect([...closed.push('```python\nx = 1\n```'), ...closed.end(true)].filter((e) => e.type !== 'text')).toEqual([start(), line('x = 1\n', 1), end('x = 1\n')]);
  });

  it('does not start a call for an opening fence cut before its newline', () => {
    expect(parse('Here is the code:\n```python')).toEqual([text('Here is the code:\n```python')]);
  });

  it('refuses push after end, and end twice is harmless', () => {
    const parser = createCodeFenceParser();
    parser.push('x');
    expect(parser.end()).toEqual([]);
    expect(parser.end()).toEqual([]);
    expect(() => parser.push('y')).toThrow();
  });

  it('emits events the moment a line completes, not later', () => {
    const parser = createCodeFenceParser();
    expect(parser.push('```pyth')).toEqual([text('```pyth')]);
    expect(parser.push('on\nimport o')).toEqual([text('on\n'), start(), text('import o')]);
    expect(parser.push('s\n')).toEqual([text('s\n'), line('import os\n', 1)]);
    expect(parser.push('```')).toEqual([text('```')]);
    expect(parser.push('\n')).toEqual([text('\n'), end('import os\n')]);
  });
});

describe('parser registry', () => {
  it('creates a code-fence parser by format name, with options', () => {
    expect(PARSER_FORMATS).toContain('code-fence');
    const parser = createParser('code-fence', { bareFence: true, callIdPrefix: 'c' });
    expect(parser.push('```\nx\n```\n').filter((e) => e.type === 'call-end')).toEqual([end('x\n', 'c1')]);
  });

  it('rejects unknown formats and bad options with InvalidRequestError', () => {
    expect(() => createParser('json-tools' as 'code-fence')).toThrow(InvalidRequestError);
    expect(() => createParser('code-fence', { languages: 'python' as unknown as string[] })).toThrow(InvalidRequestError);
  });

  // A fence's language is the first word of its info string (markdown-fence.ts fenceLanguage), so
  // "python 3" could never match: ```python 3 is a python block. Built directly (the CLI, a plugin,
  // withCodeFences), the parser took it, and no block ever ran; the gateway config refuses it (39445ab).
  it('refuses a language with a space, tab or line break in it, saying a language is one word', () => {
    for (const language of ['python 3', ' py', 'py\t3', 'py\n']) {
      let thrown: unknown;
      try {
        createCodeFenceParser({ languages: ['python', language] });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(language)).toBeInstanceOf(InvalidRequestError);
      const error = thrown as InvalidRequestError;
      expect(error.param).toBe('languages.1');
      expect(error.message).toContain(`${JSON.stringify(language)} can never match: a fence's language is the first word of its info string (\`\`\`python 3 is a python block); give one word`);
      expect(() => createParser('code-fence', { languages: [language] })).toThrow(InvalidRequestError);
    }
    expect(codesOf(parseWhole('```c++\nx\n```\n', { languages: ['py', 'c++', 'python3'] }))).toEqual(['x\n']);
  });
});

