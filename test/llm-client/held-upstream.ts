import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';

// A server in a process of its own: it must write while the test's event loop is blocked.
// It answers one request with `head` and the chunk `first`, prints "ready" 50 ms later (time for
// the client to read them), waits for the file `got`, writes the chunk `second` and the body's end,
// then creates `sent`: from then on `second` is in the client's socket buffer, unread. The process
// waits on stdin.
const SERVER = String.raw`
import os, socket, sys, time
head, first, second, got, sent = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3].encode(), sys.argv[4], sys.argv[5]
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
data = b''
while b'\r\n\r\n' not in data: data += c.recv(65536)
request, _, body = data.partition(b'\r\n\r\n')
length = [int(l.split(b':')[1]) for l in request.split(b'\r\n') if l.lower().startswith(b'content-length:')]
while length and len(body) < length[0]: body += c.recv(65536)
chunk = lambda b: b'%x\r\n' % len(b) + b + b'\r\n'
c.sendall(head + b'\r\ntransfer-encoding: chunked\r\n\r\n' + chunk(first))
time.sleep(0.05)
print('ready', flush=True)
while not os.path.exists(got): time.sleep(0.002)
c.sendall(chunk(second) + b'0\r\n\r\n')
open(sent, 'w').close()
sys.stdin.read()
`;

/** An upstream whose answer's second part arrives while this process's event loop is blocked. */
export interface HeldUpstream {
  baseUrl: string;
  /** Resolves once the head and `first` have been sent and had time to be read. */
  ready: Promise<void>;
  /**
   * Blocks the event loop (from an I/O callback, as a consumer's part handler is) until `second`
   * is in the socket buffer and at least `ms` have passed; false when the server never sent it.
   */
  blockUntilSent(ms: number): boolean;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

/** `head`: the status line and headers but the last (`transfer-encoding: chunked`, added). */
export async function startHeldUpstream(head: string, first: string, second: string): Promise<HeldUpstream> {
  const dir = mkdtempSync(join(tmpdir(), 'held-upstream-'));
  dirs.push(dir);
  const got = join(dir, 'got');
  const sent = join(dir, 'sent');
  const server = spawn('python3', ['-c', SERVER, head, first, second, got, sent], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(server);
  const port = Number(await lineFrom(server.stdout!, (line) => /^\d+$/.test(line)));
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    ready: lineFrom(server.stdout!, (line) => line === 'ready').then(() => undefined),
    blockUntilSent(ms) {
      writeFileSync(got, '');
      const from = performance.now();
      const giveUp = from + 10_000;
      while ((!existsSync(sent) || performance.now() - from < ms) && performance.now() < giveUp);
      return existsSync(sent);
    },
  };
}

/** Stops the servers and removes their folders (afterEach). */
export function stopHeldUpstreams(): void {
  for (const child of children.splice(0)) child.kill();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

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
