import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { closeUpstreamPools, pumpChatCompletion, type UpstreamPart } from '../../llm-client/index.ts';
import { MODEL, START, vllmChunk } from './fixtures/vllm-streams.ts';

// A server in a process of its own: it must write while this process's event loop is blocked.
// It answers one request with `first`, waits for the file `got` (the client holds a part of it),
// writes `second`, then creates `sent`: from then on `second` is in the client's socket buffer,
// unread. The body is chunked and complete; the process waits on stdin.
const SERVER = String.raw`
import os, socket, sys, time
first, second, got, sent = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3], sys.argv[4]
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
data = b''
while b'\r\n\r\n' not in data: data += c.recv(65536)
head, _, body = data.partition(b'\r\n\r\n')
length = [int(l.split(b':')[1]) for l in head.split(b'\r\n') if l.lower().startswith(b'content-length:')]
while length and len(body) < length[0]: body += c.recv(65536)
chunk = lambda b: b'%x\r\n' % len(b) + b + b'\r\n'
c.sendall(b'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n' + chunk(first))
while not os.path.exists(got): time.sleep(0.002)
c.sendall(chunk(second) + b'0\r\n\r\n')
open(sent, 'w').close()
sys.stdin.read()
`;

const DEADLINE_MS = 150;
const generous = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 10_000, idleMs: 10_000 };
const role = vllmChunk({ role: 'assistant', content: '' });
const rest = vllmChunk({ content: 'b' }) + vllmChunk({}, 'stop') + 'data: [DONE]\n\n';
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
afterAll(closeUpstreamPools);

// Review: a phase's timer fires in the timers phase, before the poll phase reads the socket, so a
// token that arrived in time while the gateway's loop was busy (a long synchronous task) was not
// yet read when the timer looked, and the stream failed as idle (or without a first token) though
// the upstream never was.
describe.each([
  // Held: 'a', the first token; 'b' comes while the loop is blocked past the idle deadline.
  { deadline: 'idle', timeouts: { idleMs: DEADLINE_MS }, first: role + vllmChunk({ content: 'a' }), second: rest, holdOn: 'a' },
  // Held: the role chunk (no token yet); 'a' comes while the loop is blocked past the first-token deadline.
  { deadline: 'first-token', timeouts: { firstTokenMs: DEADLINE_MS }, first: role, second: vllmChunk({ content: 'a' }) + rest, holdOn: 'start' },
  // Held: 'a'; the rest of the answer, its finish included, comes while the loop is blocked past totalMs (from the request's start).
  { deadline: 'total', timeouts: { totalMs: DEADLINE_MS }, first: role + vllmChunk({ content: 'a' }), second: rest, holdOn: 'a' },
])('the $deadline deadline behind a blocked event loop', ({ timeouts, first, second, holdOn }) => {
  it('reads the chunk already in the socket buffer before calling the deadline missed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'idle-behind-'));
    dirs.push(dir);
    const got = join(dir, 'got');
    const sent = join(dir, 'sent');
    const server = spawn('python3', ['-c', SERVER, first, second, got, sent], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(server);
    const [line] = (await once(server.stdout!, 'data')) as [Buffer];
    const baseUrl = `http://127.0.0.1:${Number(String(line).trim())}/v1`;

    const parts: UpstreamPart[] = [];
    let blockedUntilSent = true;
    const stream = pumpChatCompletion(
      {
        baseUrl,
        body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }] },
        signal: new AbortController().signal,
        timeouts: { ...generous, ...timeouts },
      },
      (part) => {
        parts.push(part);
        if (part.type !== holdOn && !(part.type === 'content' && part.text === holdOn)) return;
        // The loop is blocked from here until `second` is in the socket buffer and the deadline
        // (first token: from the request's start; idle: from 'a') has passed.
        writeFileSync(got, '');
        const from = performance.now();
        const giveUp = from + 10_000;
        while ((!existsSync(sent) || performance.now() - from < DEADLINE_MS + 50) && performance.now() < giveUp);
        blockedUntilSent = existsSync(sent);
      },
    );
    const error = await stream.done.then(() => undefined, (e: unknown) => e);
    expect(blockedUntilSent).toBe(true);
    expect(error).toBeUndefined();
    expect(parts.filter((p) => p.type !== 'usage')).toEqual([
      START,
      { type: 'content', text: 'a' },
      { type: 'content', text: 'b' },
      expect.objectContaining({ type: 'finish' }),
      { type: 'end' },
    ]);
  });
});
