import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseToJsonLines } from '../../gateway/commands/parse-command.ts';
import { suiteTempDir } from '../support/temp-dir.ts';
import { loadVectors, VECTOR_TOOL_PARSER, vectorTools, type ToolcallVector } from '../support/toolcall-vectors.ts';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../bin/conveyor.js', import.meta.url));
const dir = suiteTempDir('conveyor-parse-');

interface Event {
  type: string;
  callId?: string;
  name?: string;
  text?: string;
  args?: Record<string, unknown>;
}

/** The real CLI in a child process, as a user runs it. */
async function parseWithCli(v: ToolcallVector, extra: string[] = []): Promise<Event[]> {
  const file = join(dir, `${v.id}.txt`);
  writeFileSync(file, v.raw_text);
  const tools = vectorTools(v);
  const args = [CLI, 'parse', '--format', VECTOR_TOOL_PARSER[v.format]!, file, '--coalesce', ...extra];
  if (tools) args.push('--options', JSON.stringify({ toolDefinitions: tools }));
  const { stdout } = await run(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Event);
}

const callsOf = (events: Event[]) => events.filter((e) => e.type === 'call-end').map((e) => e.args);
const textOf = (events: Event[]) => events.filter((e) => e.type === 'text').map((e) => e.text).join('');

/** Bounded parallelism: a few CLI processes at a time on a 2-core machine. */
async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

describe('conveyor parse (the CLI, in a child process)', () => {
  const vectors = loadVectors();

  // Every vector through the command's core in-process (fast), a few through a real child process.
  const inProcess = (v: ToolcallVector): Event[] => {
    const tools = vectorTools(v);
    const lines = parseToJsonLines([v.raw_text], { format: VECTOR_TOOL_PARSER[v.format]!, coalesce: true, ...(tools ? { options: JSON.stringify({ toolDefinitions: tools }) } : {}) });
    return lines.map((l) => JSON.parse(l) as Event);
  };

  it('prints the same events in a child process as in-process', async () => {
    const sample = [vectors[0]!, vectors.find((v) => v.format === 'hermes')!, vectors.find((v) => v.format === 'qwen3_coder' && v.tools_schema)!];
    await inBatches(sample, 3, async (v) => {
      expect(await parseWithCli(v), v.id).toEqual(inProcess(v));
    });
  });

  it('gives every vector its expected calls', () => {
    for (const v of vectors) {
      const whole = inProcess(v);
      if (v.expected && v.format !== 'llmcompiler:plan') expect(callsOf(whole), v.id).toEqual(v.expected.map((c) => c.arguments));
      if (v.expected_error !== undefined && v.format !== 'conveyor:python_code_block') {
        expect(whole.some((e) => e.type === 'malformed'), v.id).toBe(true);
      }
      if (typeof v.expected_content === 'string' && v.expected?.length) expect(textOf(whole), v.id).toContain(v.expected_content.trim());
    }
  });

  it('replays a recorded split from --chunks FILE, and one character per delta', async () => {
    const v = loadVectors().find((x) => Array.isArray(x.stream_chunks))!;
    const chunks = join(dir, 'chunks.json');
    writeFileSync(chunks, JSON.stringify(v.stream_chunks));
    const whole = await parseWithCli(v);
    expect(await parseWithCli(v, ['--chunks', chunks])).toEqual(whole);
    expect(await parseWithCli(v, ['--chunks', 'char'])).toEqual(whole);
  });

  it("reads stdin for the file '-', as Unix filters do (it looked for a file named '-')", async () => {
    const child = spawn(process.execPath, [CLI, 'parse', '--format', 'hermes', '--coalesce', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdin.end('<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>');
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const events = stdout.trim().split('\n').map((l) => JSON.parse(l) as Event);
    expect(callsOf(events)).toEqual([{ a: 1 }]);
  });

  it('ends quietly when its reader stops early (| head), as a Unix filter does', async () => {
    const file = join(dir, 'long.txt');
    writeFileSync(file, '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call> some prose\n'.repeat(2000));
    const child = spawn(process.execPath, [CLI, 'parse', '--format', 'hermes', '--chunks', 'char', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    // Read one chunk, then go away, as `head -1` does.
    await new Promise((resolve) => child.stdout.once('data', resolve));
    child.stdout.destroy();
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('names --chunks when its value is neither a split nor a JSON file of deltas, in one line', async () => {
    const text = join(dir, 'not-json.txt');
    writeFileSync(text, '<tool_call>{"name": "f", "arguments": {}}</tool_call>');
    for (const [chunks, cause] of [[text, "Unexpected token '<'"], ['3x', "ENOENT: no such file or directory, open '3x'"]] as const) {
      const err = await run(process.execPath, [CLI, 'parse', '--format', 'hermes', '--chunks', chunks, text]).catch((e: { code: number; stderr: string }) => e);
      expect(err).toMatchObject({ code: 1 });
      const { stderr } = err as { stderr: string };
      expect(stderr).toContain(`conveyor: --chunks ${chunks}: expected "char", a number of characters per delta, or a JSON file holding an array of deltas (${cause}`);
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });

  // The help once listed `-f, --format <name>` like any optional setting, and no format names: a
  // user learnt both only from the errors (`required option … not specified`, `known: …`).
  it('says in --help that --format is required, and lists the formats', async () => {
    const { stdout } = await run(process.execPath, [CLI, 'parse', '--help']);
    expect(stdout).toContain('Usage: conveyor parse --format <name> [options] [file]');
    const format = stdout.slice(stdout.indexOf('-f, --format <name>'), stdout.indexOf('--chunks')).replace(/\s+/g, ' ');
    expect(format).toContain('required: the tool-call format, one of code-fence,');
    for (const name of ['hermes', 'mistral', 'llama3-json', 'harmony', 'qwen3-coder', 'deepseek-v31']) expect(format).toContain(` ${name},`);
    expect(format).toContain("vLLM's --tool-call-parser name");
  });

  it('fails clearly on an unknown format', async () => {
    const err = await run(process.execPath, [CLI, 'parse', '--format', 'nope', '/dev/null']).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).toBe(2);
    expect((err as { stderr: string }).stderr).toMatch(/^conveyor: option '-f, --format <name>' argument 'nope' is invalid\. unknown tool-call format "nope"; known: [^\n]*\n$/);
  });

  // A usage mistake (exit 2) and a failure to run (exit 1) once differed only by chance: a wrong
  // --format exited 2, a missing one 1, and commander's messages began `error:`, ours `conveyor parse:`.
  it('tells a wrong command line (exit 2) from an input it cannot read (exit 1), each in one line starting conveyor:', async () => {
    const attempts = [
      { args: [], code: 2, stderr: "conveyor: required option '-f, --format <name>' not specified\n" },
      { args: ['--format', 'hermes', '--chunks', '0', '/dev/null'], code: 2, stderr: "conveyor: option '--chunks <spec>' argument '0' is invalid. N characters per delta must be a whole number of at least 1\n" },
      { args: ['--format', 'hermes', '--options', '{bad', '/dev/null'], code: 2, stderr: "conveyor: option '--options <json>' argument '{bad' is invalid. not valid JSON\n" },
      { args: ['--format', 'hermes', '--bogus'], code: 2, stderr: "conveyor: unknown option '--bogus'\n" },
      // JSON the format's options refuse failed as the input was parsed: exit 1, as an unreadable file.
      { args: ['--format', 'hermes', '--options', '{"tools":5}', '/dev/null'], code: 2, stderr: expect.stringMatching(/^conveyor: option '--options <json>' argument '\{"tools":5\}' is invalid\. invalid hermes parser options: [^\n]*tools\n$/) },
      { args: ['--format', 'hermes', join(dir, 'no-such-output.txt')], code: 1, stderr: `conveyor: cannot read ${join(dir, 'no-such-output.txt')}: no such file\n` },
      { args: ['--format', 'hermes', dir], code: 1, stderr: `conveyor: cannot read ${dir}: it is a directory\n` },
    ];
    for (const { args, code, stderr } of attempts) {
      const err = await run(process.execPath, [CLI, 'parse', ...args]).catch((e: { code: number; stderr: string }) => e);
      expect(err, args.join(' ')).toMatchObject({ code, stderr });
    }
  });

  // `--chunks 0` was a usage error, but `--chunks -1` and `--chunks 2.5` were read as file names:
  // exit 1 and "ENOENT … open '-1'", as if a file had gone missing.
  it('refuses a number of characters per delta that is not a whole number of at least 1 as a usage error, exit 2', async () => {
    for (const chunks of ['-1', '2.5', '+3', '.5']) {
      const err = await run(process.execPath, [CLI, 'parse', '--format', 'hermes', '--chunks', chunks, '/dev/null']).catch((e: { code: number; stderr: string }) => e);
      expect(err, chunks).toMatchObject({ code: 2, stderr: `conveyor: option '--chunks <spec>' argument '${chunks}' is invalid. N characters per delta must be a whole number of at least 1\n` });
    }
  });
});

describe('parse --starts-in-reasoning', () => {
  it('reads the output up to </think> as reasoning, as a prompt that opened the block leaves it, and never runs a call written there', () => {
    const raw = 'A call like <tool_call>{"name": "x", "arguments": {}}</tool_call> is not needed.</think>\n\nNo call.';
    const events = parseToJsonLines([raw], { format: 'hermes', startsInReasoning: true, coalesce: true }).map((l) => JSON.parse(l) as Event);
    expect(events).toEqual([
      { type: 'reasoning', text: 'A call like <tool_call>{"name": "x", "arguments": {}}</tool_call> is not needed.' },
      { type: 'text', text: '\n\nNo call.' },
    ]);
    // --reasoning alone reads a block only where the output opens one: this is all text, the call included.
    const plain = parseToJsonLines([raw], { format: 'hermes', reasoning: true, coalesce: true }).map((l) => JSON.parse(l) as Event);
    expect(plain.some((e) => e.type === 'reasoning')).toBe(false);
    expect(plain.some((e) => e.type === 'call-end')).toBe(true);
  });
});
