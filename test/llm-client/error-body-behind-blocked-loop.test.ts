import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { UpstreamResponseError } from '../../core/errors.ts';
import { closeUpstreamPools, pumpChatCompletion } from '../../llm-client/index.ts';
import { ERROR_BODY_WAIT_MS } from '../../llm-client/upstream-response-error.ts';
import { MODEL } from './fixtures/vllm-streams.ts';
import { startTestUpstream, type TestUpstream } from './upstream-test-server.ts';

// A server in a process of its own: it must write while this process's event loop is blocked.
// It answers one request with a 500 and the start of its JSON body, prints "ready" 50 ms later
// (time for the client to read them, so the body's wait is running), waits for the file `got`, writes the rest of the body and its end, then creates `sent`: from then on the whole
// body is in the client's socket buffer, unread. The process waits on stdin.
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
c.sendall(b'HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n' + chunk(first))
time.sleep(0.05)
print('ready', flush=True)
while not os.path.exists(got): time.sleep(0.002)
c.sendall(chunk(second) + b'0\r\n\r\n')
open(sent, 'w').close()
sys.stdin.read()
`;

const generous = { connectMs: 10_000, headersMs: 10_000, firstTokenMs: 10_000, idleMs: 10_000 };
const request = { model: MODEL, messages: [{ role: 'user', content: 'hi' }] };
const children: ChildProcess[] = [];
const dirs: string[] = [];
const upstreams: TestUpstream[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});
afterAll(closeUpstreamPools);

/** Resolves with the first line of `stream` that `match` accepts (lines may come together in one read). */
function lineFrom(stream: Readable, match: (line: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (data: Buffer): void => {
      text += String(data);
      const line = text.split('\n').find((l) => match(l.trim()));
      if (line === undefined) return;
      stream.off('data', onData);
      resolve(line.trim());
    };
    stream.on('data', onData);
  });
}

// Review: the total deadline (and an error answer's own body wait) fired in the timers phase,
// before the poll phase read the socket, so an error body that had all come while the loop was
// blocked (a long synchronous task) was judged by the read before the block: the 500 failed with
// its JSON cut mid-message, or as upstream_total_timeout when the status line was unread too.
describe.each([
  { wait: 'totalMs', timeouts: { totalMs: 300 }, blockMs: 300 },
  { wait: "the error body's own wait", timeouts: {}, blockMs: ERROR_BODY_WAIT_MS },
])('an error answer whose body came while the event loop was blocked past $wait', ({ timeouts, blockMs }) => {
  it('reads the body in the socket buffer before the deadline fails it: the 500 with its whole message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'error-body-behind-'));
    dirs.push(dir);
    const got = join(dir, 'got');
    const sent = join(dir, 'sent');
    const server = spawn('python3', ['-c', SERVER, '{"error": {"message": "engine', ' overloaded", "type": "InternalServerError", "code": 500}}', got, sent], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.push(server);
    const port = Number(await lineFrom(server.stdout!, (line) => /^\d+$/.test(line)));
    const stream = pumpChatCompletion(
      { baseUrl: `http://127.0.0.1:${port}/v1`, body: request, signal: new AbortController().signal, timeouts: { ...generous, ...timeouts } },
      () => {},
    );
    // Blocked from an I/O callback (the poll phase), as a consumer's part handler is: the timers phase
    // comes next, before the poll phase reads again. (A timer callback that blocks would not do: the
    // timers phase goes on with the clock it read before it, and the total is not yet due by that.)
    await lineFrom(server.stdout!, (line) => line === 'ready');
    // The loop is blocked from here until the rest is in the socket buffer and the wait has run out.
    writeFileSync(got, '');
    const from = performance.now();
    const giveUp = from + 10_000;
    while ((!existsSync(sent) || performance.now() - from < blockMs + 50) && performance.now() < giveUp);
    expect(existsSync(sent)).toBe(true);

    const error = await stream.done.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamResponseError);
    expect(error).toMatchObject({ code: 'upstream_response_error', status: 500, message: 'engine overloaded' });
  });
});

describe('an error answer whose body drips on and never ends', () => {
  it('settles when totalMs runs out, with the status and what came of the body', async () => {
    const drip = await startTestUpstream((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.write('engine overloaded');
      const timer = setInterval(() => res.write('.'), 20);
      res.on('close', () => clearInterval(timer));
    });
    upstreams.push(drip);
    const stream = pumpChatCompletion(
      { baseUrl: drip.baseUrl, body: request, signal: new AbortController().signal, timeouts: { ...generous, totalMs: 300 } },
      () => {},
    );
    const error = await stream.done.then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'upstream_response_error', status: 500, message: expect.stringMatching(/^engine overloaded\.*$/) });
    // The total ran out: no replica is to be tried next with none of the request's time left (failover-stream.ts).
    expect(stream.interrupted).toBe(true);
    await drip.requestSocketClosed(0);
  });
});
